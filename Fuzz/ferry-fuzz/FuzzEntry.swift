// The fuzzing entry point, built two ways:
// - with -DFUZZING and -sanitize=fuzzer (`make fuzz`): libFuzzer's own main calls
//   LLVMFuzzerTestOneInput with each input; FERRY_FUZZ_TARGET names the parser.
// - without: `ferry-fuzz TARGET FILE...` runs saved inputs (a crash from libFuzzer) once
//   each, to reproduce them under a debugger.
// No top-level statements either way: the fuzzing build is compiled with -parse-as-library.
import FerryFuzzing
import Foundation

#if FUZZING
let fuzzTarget: FuzzTarget = {
    let name = ProcessInfo.processInfo.environment["FERRY_FUZZ_TARGET"] ?? ""
    guard let target = FuzzTarget(rawValue: name) else {
        fatalError("set FERRY_FUZZ_TARGET to one of \(FuzzTarget.allCases.map(\.rawValue))")
    }
    return target
}()

// libFuzzer's C calling convention is the boundary: the bytes are copied into Data at once.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let bytes else { return 0 }
    fuzzTarget.run(Data(bytes: bytes, count: count))
    return 0
}

typealias FuzzCallback = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(_ argc: UnsafeMutablePointer<CInt>,
                     _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                     _ callback: FuzzCallback) -> CInt

// SwiftPM links an executable with `main` defined as `<module>_main`, so libFuzzer's own
// main is never pulled in: this one hands the command line to libFuzzer's driver instead.
@_cdecl("ferry_fuzz_main")
public func ferryFuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments, fuzzOneInput)
}
#else
@main
struct FuzzReplay {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name), arguments.count > 1 else {
            FileHandle.standardError.write(Data("usage: ferry-fuzz \(FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")) FILE...\n".utf8))
            exit(2)
        }
        for path in arguments.dropFirst() {
            guard let input = FileManager.default.contents(atPath: path) else {
                FileHandle.standardError.write(Data("ferry-fuzz: cannot read \(path)\n".utf8))
                exit(2)
            }
            target.run(input)
            print("ok \(path)")
        }
    }
}
#endif
