// TLS in front of the control API: OpenSSL (the system's libssl, which libcurl already
// links) accepts TLS connections on the configured address and pumps the plaintext to and
// from the HTTP server's private Unix socket. Everything that touches sockets, addresses
// and OpenSSL's pointers stays here; Swift sees file descriptors and an opaque context.
#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

static inline void COpenSSL_error(char *error, size_t size, const char *what) {
    unsigned long code = ERR_get_error();
    char reason[256] = "";
    if (code != 0) ERR_error_string_n(code, reason, sizeof(reason));
    snprintf(error, size, "%s%s%s", what, reason[0] ? ": " : "", reason);
}

/// A server context with the certificate chain and key (PEM), TLS 1.2 or later; NULL and a
/// message in `error` when they cannot be used.
static inline SSL_CTX *COpenSSL_server_context(const char *certificate, const char *key, char *error, size_t size) {
    SSL_CTX *context = SSL_CTX_new(TLS_server_method());
    if (context == NULL) { COpenSSL_error(error, size, "cannot make a TLS context"); return NULL; }
    SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
    if (SSL_CTX_use_certificate_chain_file(context, certificate) != 1) {
        COpenSSL_error(error, size, "cannot read the TLS certificate");
        SSL_CTX_free(context);
        return NULL;
    }
    if (SSL_CTX_use_PrivateKey_file(context, key, SSL_FILETYPE_PEM) != 1 || SSL_CTX_check_private_key(context) != 1) {
        COpenSSL_error(error, size, "cannot use the TLS key with that certificate");
        SSL_CTX_free(context);
        return NULL;
    }
    return context;
}

static inline void COpenSSL_free_context(SSL_CTX *context) { SSL_CTX_free(context); }

/// A listening TCP socket on host:port (close-on-exec, address reuse); -1 and a message.
static inline int COpenSSL_listen(const char *host, int port, char *error, size_t size) {
    struct addrinfo hints, *found = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    char service[16];
    snprintf(service, sizeof(service), "%d", port);
    int status = getaddrinfo(host, service, &hints, &found);
    if (status != 0) { snprintf(error, size, "cannot resolve %s: %s", host, gai_strerror(status)); return -1; }
    int descriptor = -1;
    for (struct addrinfo *entry = found; entry != NULL; entry = entry->ai_next) {
        descriptor = socket(entry->ai_family, entry->ai_socktype | SOCK_CLOEXEC, entry->ai_protocol);
        if (descriptor < 0) continue;
        int on = 1;
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
        if (bind(descriptor, entry->ai_addr, entry->ai_addrlen) == 0 && listen(descriptor, 64) == 0) break;
        snprintf(error, size, "cannot listen on %s:%d: %s", host, port, strerror(errno));
        close(descriptor);
        descriptor = -1;
    }
    freeaddrinfo(found);
    return descriptor;
}

/// The next connection (close-on-exec), or -1 once the listening socket was shut down.
/// Other failures (a connection aborted before it was taken, no descriptor or memory left
/// for now) are waited out: the caller closes the socket when this returns -1, and the
/// socket must still be the caller's when `COpenSSL_stop_listening` shuts it down.
static inline int COpenSSL_accept(int listening) {
    for (;;) {
        int descriptor = accept4(listening, NULL, NULL, SOCK_CLOEXEC);
        if (descriptor >= 0) return descriptor;
        if (errno == EINVAL || errno == EBADF || errno == ENOTSOCK) return -1;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
            struct timespec pause = {0, 100000000};
            nanosleep(&pause, NULL);
        }
    }
}

/// Wakes a thread blocked in `COpenSSL_accept` on this socket (accept then fails with
/// EINVAL, now or on its next call). It does not close the socket: the accepting thread
/// does once it has left `accept`, so that it never accepts on a number that another
/// open has been given meanwhile.
static inline void COpenSSL_stop_listening(int listening) {
    shutdown(listening, SHUT_RDWR);
}

static inline int COpenSSL_connect_unix(const char *path) {
    struct sockaddr_un address;
    memset(&address, 0, sizeof(address));
    address.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(address.sun_path)) return -1;
    strcpy(address.sun_path, path);
    int descriptor = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (descriptor < 0) return -1;
    if (connect(descriptor, (struct sockaddr *)&address, sizeof(address)) != 0) { close(descriptor); return -1; }
    return descriptor;
}

static inline int COpenSSL_write_all(int descriptor, const char *bytes, int count) {
    while (count > 0) {
        ssize_t written = send(descriptor, bytes, (size_t)count, MSG_NOSIGNAL);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) return -1;
        bytes += written;
        count -= (int)written;
    }
    return 0;
}

/// Serves one TLS connection: the handshake (at most 10 s), then bytes both ways between
/// the client and `upstream` (a connection to the HTTP server) until either side closes.
/// Blocking: run it on a thread of its own. Closes both descriptors.
static inline void COpenSSL_serve(SSL_CTX *context, int client, int upstream) {
    struct timeval handshake = { 10, 0 };
    setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &handshake, sizeof(handshake));
    setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &handshake, sizeof(handshake));
    SSL *tls = SSL_new(context);
    if (tls == NULL || SSL_set_fd(tls, client) != 1 || SSL_accept(tls) != 1) goto done;
    struct timeval none = { 0, 0 };
    setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof(none));
    char buffer[16384];
    for (;;) {
        if (SSL_pending(tls) == 0) {
            struct pollfd waiting[2] = { { client, POLLIN, 0 }, { upstream, POLLIN, 0 } };
            int ready = poll(waiting, 2, -1);
            if (ready < 0 && errno == EINTR) continue;
            if (ready < 0) break;
            if (waiting[1].revents & (POLLIN | POLLHUP | POLLERR)) {
                ssize_t got = recv(upstream, buffer, sizeof(buffer), 0);
                if (got < 0 && errno == EINTR) continue;
                if (got <= 0) break;
                if (SSL_write(tls, buffer, (int)got) <= 0) break;
                continue;
            }
            if (!(waiting[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        }
        int got = SSL_read(tls, buffer, sizeof(buffer));
        if (got <= 0) {
            int reason = SSL_get_error(tls, got);
            if (reason == SSL_ERROR_WANT_READ || reason == SSL_ERROR_WANT_WRITE) continue;
            break;
        }
        if (COpenSSL_write_all(upstream, buffer, got) != 0) break;
    }
    SSL_shutdown(tls);
done:
    if (tls != NULL) SSL_free(tls);
    ERR_clear_error();
    close(client);
    close(upstream);
}

#endif
