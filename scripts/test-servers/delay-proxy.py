#!/usr/bin/env python3
"""A TCP relay that holds everything a server sends for a fixed time: a network's round
trip on loopback, for benchmarks.

Usage: delay-proxy.py UPSTREAM_ORIGIN SECONDS
  e.g. delay-proxy.py http://127.0.0.1:8080 0.01
Prints `http://127.0.0.1:PORT` once listening; runs until killed (or its parent ends).

Each client connection gets its own connection to the server. What the client sends goes
on at once; what the server sends is held SECONDS from the moment it arrived, in order,
so every answer reaches the client SECONDS late, whatever the protocol above (keep-alive
connections stay as the client and server make them). Not a mode of fault-proxy.py: that
one reads whole requests in a thread each and closes every connection, and with answers
held there curl -Z took 4-5 s for 600 PUTs of 4 KiB (about 2 s through this relay): it
measured itself rather than the round trips.
"""
import asyncio, sys
from urllib.parse import urlsplit
from parent_watch import end_with_parent


async def relay(reader, writer, delay):
    """Copies reader to writer, each piece written `delay` seconds after it was read;
    the end of the stream is passed on the same way."""
    loop = asyncio.get_running_loop()
    pieces = asyncio.Queue()

    async def send():
        while True:
            due, piece = await pieces.get()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if not piece:
                if writer.can_write_eof():
                    writer.write_eof()
                return
            writer.write(piece)
            await writer.drain()

    sender = asyncio.create_task(send())
    try:
        while True:
            piece = await reader.read(1 << 16)
            pieces.put_nowait((loop.time() + delay, piece))
            if not piece:
                break
        await sender
    except (ConnectionError, OSError):
        sender.cancel()
        raise


async def main():
    upstream = urlsplit(sys.argv[1])
    delay = float(sys.argv[2])

    async def connection(client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection(upstream.hostname, upstream.port)
        except OSError:
            client_writer.close()
            return
        try:
            await asyncio.gather(relay(client_reader, server_writer, 0), relay(server_reader, client_writer, delay))
        except (ConnectionError, OSError):
            pass
        finally:
            for writer in (client_writer, server_writer):
                writer.close()

    server = await asyncio.start_server(connection, "127.0.0.1", 0)
    print(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


end_with_parent()
asyncio.run(main())
