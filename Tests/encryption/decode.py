#!/usr/bin/env python3
"""An independent decoder of Ferry's encrypted remotes, written from docs/encryption.md
with the Python `cryptography` package (no Ferry code). A test runs it on files Ferry wrote.

  decode.py KEY_FILE STORED_FILE [STORED_PATH]
                                            the plaintext, to stdout; STORED_PATH (the
                                            file's stored path from the remote's root, as
                                            stored) is needed for versions 3 and 4
  decode.py --name KEY_FILE STORED_NAME     the plaintext of one stored path component
  decode.py --vectors                       the test vectors of docs/encryption.md
"""
import struct
import sys

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, AESGCMSIV, ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

MAGIC = b"FERRYENC"
HEADER = 32
SEGMENT = 65536
TAG = 16
# The header's version byte names the segments' AEAD, and (3, 4) that they also
# authenticate the file's stored path.
CIPHERS = {1: ChaCha20Poly1305, 2: AESGCM, 3: ChaCha20Poly1305, 4: AESGCM}


def associated_data(header, stored_path):
    return header + stored_path.encode() if header[8] >= 3 else header


def hkdf(key, info, length, salt=None):
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=salt, info=info.encode()).derive(key)


def read_key_file(path):
    lines = [l.strip() for l in open(path).read().splitlines()]
    lines = [l for l in lines if l and not l.startswith("#")]
    key = bytes.fromhex(lines[0])
    assert len(key) == 32
    return key


def nonce(prefix, index, last):
    return prefix + struct.pack(">I", index) + (b"\x01" if last else b"\x00")


def decrypt_file(master, data, stored_path=""):
    content = hkdf(master, "ferry-encryption v1 content", 32)
    header = data[:HEADER]
    if header[:8] != MAGIC or header[8] not in CIPHERS:
        raise ValueError("not a Ferry encrypted file of version 1 to 4")
    prefix, salt = header[9:16], header[16:32]
    aead = CIPHERS[header[8]](hkdf(content, "ferry-encryption v1 file", 32, salt=salt))
    body = data[HEADER:]
    stride = SEGMENT + TAG
    count = max(1, -(-len(body) // stride))
    out = bytearray()
    for index in range(count):
        segment = body[index * stride:(index + 1) * stride]
        out += aead.decrypt(nonce(prefix, index, index == count - 1), segment, associated_data(header, stored_path))
    return bytes(out)


def encrypt_file(master, version, prefix, salt, plaintext, stored_path=""):
    content = hkdf(master, "ferry-encryption v1 content", 32)
    header = MAGIC + bytes([version]) + prefix + salt
    aead = CIPHERS[version](hkdf(content, "ferry-encryption v1 file", 32, salt=salt))
    count = max(1, -(-len(plaintext) // SEGMENT))
    out = bytearray(header)
    for index in range(count):
        out += aead.encrypt(nonce(prefix, index, index == count - 1), plaintext[index * SEGMENT:(index + 1) * SEGMENT],
                            associated_data(header, stored_path))
    return bytes(out)


def b32decode(text):
    import base64
    padded = text.upper() + "=" * (-len(text) % 8)
    return base64.b32decode(padded)


def b32encode(data):
    import base64
    return base64.b32encode(data).decode().rstrip("=").lower()


def name_cipher(master):
    return AESGCMSIV(hkdf(master, "ferry-encryption v1 names", 32)), hkdf(master, "ferry-encryption v1 name nonce", 12)


def decrypt_name(master, stored):
    aead, fixed = name_cipher(master)
    return aead.decrypt(fixed, b32decode(stored), None).decode()


def encrypt_name(master, name):
    aead, fixed = name_cipher(master)
    return b32encode(aead.encrypt(fixed, name.encode(), None))


def vectors():
    master = bytes(range(32))
    prefix = bytes.fromhex("a0a1a2a3a4a5a6")
    salt = bytes.fromhex("b0b1b2b3b4b5b6b7b8b9babbbcbdbebf")
    print("key check", hkdf(master, "ferry-encryption v1 key check", 32).hex())
    for version in sorted(CIPHERS):
        # Versions 3 and 4 bind the stored path; the vectors use this one.
        stored_path = "keltqb7iadxeqf4k4ot3qiusregv7izrdsd37qmrhcjos" if version >= 3 else ""
        for plaintext in [b"", b"Ferry", bytes(i % 251 for i in range(65536 + 3))]:
            data = encrypt_file(master, version, prefix, salt, plaintext, stored_path)
            assert decrypt_file(master, data, stored_path) == plaintext
            if len(data) < 200:
                print("version", version, len(plaintext), data.hex())
            else:
                import hashlib
                print("version", version, len(plaintext), "sha256", hashlib.sha256(data).hexdigest(), "last 32", data[-32:].hex())
    for name in ["IMG_0001.jpg", ".thumbnails"]:
        print(name, encrypt_name(master, name))


def main(argv):
    if argv[1:2] == ["--vectors"]:
        vectors()
    elif argv[1:2] == ["--name"]:
        print(decrypt_name(read_key_file(argv[2]), argv[3]))
    else:
        stored_path = argv[3] if len(argv) > 3 else ""
        sys.stdout.buffer.write(decrypt_file(read_key_file(argv[1]), open(argv[2], "rb").read(), stored_path))


if __name__ == "__main__":
    main(sys.argv)
