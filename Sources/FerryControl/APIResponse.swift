import FerryCore
import FlyingFox
import Foundation

/// JSON responses and the one error shape: `{"error": "what to do"}`.
enum APIResponse {
    static func json(_ object: JSONObject, status: Int = 200) -> HTTPResponse {
        HTTPResponse(statusCode: HTTPStatusCode(status, phrase: phrase(status)),
                     headers: [.contentType: "application/json", .cacheControl: "no-store"],
                     body: Data(object.text.utf8))
    }

    static func error(_ status: Int, _ message: String) -> HTTPResponse {
        var object = JSONObject()
        object.add("error", message)
        return json(object, status: status)
    }

    static func text(_ text: String, contentType: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(statusCode: HTTPStatusCode(status, phrase: phrase(status)),
                     headers: [.contentType: contentType, .cacheControl: "no-store"], body: Data(text.utf8))
    }

    static func phrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 202: "Accepted"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 409: "Conflict"
        case 503: "Service Unavailable"
        default: "Status"
        }
    }
}
