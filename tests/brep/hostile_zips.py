"""Writes hostile FCStd archives into OUTDIR (hostile_zips.py OUTDIR
GOOD.FCStd) and prints one line per file: NAME<TAB>a word its refusal
must contain. GOOD.FCStd is a valid document the variants start from."""
import os
import struct
import sys
import warnings
import zipfile
import zlib

out, good = sys.argv[1], sys.argv[2]
warnings.simplefilter("ignore")  # zipfile warns of the duplicate it is asked to write
cases = []


def path(name):
    return os.path.join(out, name + ".FCStd")


def write(name, entries, expect, method=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(path(name), "w", method) as z:
        for n, data in entries:
            z.writestr(zipfile.ZipInfo(n), data, compress_type=method)
    cases.append((name, expect))


with zipfile.ZipFile(good) as z:
    doc = z.read("Document.xml")
    shapes = [(i.filename, z.read(i.filename)) for i in z.infolist() if i.filename != "Document.xml"]
raw = open(good, "rb").read()

# not a zip at all, and a valid one cut short (its end record gone)
open(path("not_zip"), "wb").write(b"<Document/>\n" * 10)
cases.append(("not_zip", "not a zip archive"))
open(path("truncated"), "wb").write(raw[: len(raw) // 2])
cases.append(("truncated", "not a zip archive"))
open(path("empty"), "wb").write(b"")
cases.append(("empty", "not a zip archive"))

# an end record whose central directory lies past the file
eocd = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, 46, 1 << 30, 0)
open(path("cdir_out_of_bounds"), "wb").write(b"PK\x03\x04" + b"\0" * 60 + eocd)
cases.append(("cdir_out_of_bounds", "central directory"))

# path traversal and other unsafe names
for tag, name in [("traversal", "../../etc/passwd"), ("absolute", "/etc/passwd"),
                  ("backslash", "..\\evil"), ("control", "a\x01b")]:
    write("name_" + tag, [("Document.xml", doc), (name, b"x")] + shapes, "unsafe name")
write("duplicate", [("Document.xml", doc), ("Document.xml", doc)] + shapes, "twice")

# more entries than the cap
write("many_entries", [("Document.xml", doc)] + [("e%05d" % i, b"") for i in range(5000)],
      "entries")

# a bomb: 300 MiB of zeros declared honestly (over the entry cap) ...
big = zlib.compressobj(9, zlib.DEFLATED, -15)
blob = b"".join(big.compress(b"\0" * (1 << 20)) for _ in range(300)) + big.flush()
def raw_zip(name, data, csize, usize, crc, method=8):
    lh = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0, crc, csize, usize,
                     len(name), 0) + name + data
    cd = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method, 0, 0, crc, csize,
                     usize, len(name), 0, 0, 0, 0, 0, 0) + name
    e = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(cd), len(lh), 0)
    return lh + cd + e
open(path("bomb_declared"), "wb").write(
    raw_zip(b"Document.xml", blob, len(blob), 300 << 20, 0))
cases.append(("bomb_declared", "the cap is"))
# ... declared small, inflating past it (a lying size)
small = zlib.compressobj(9, zlib.DEFLATED, -15)
blob = small.compress(b"<" * (10 << 20)) + small.flush()
open(path("bomb_lying"), "wb").write(raw_zip(b"Document.xml", blob, len(blob), 20000, 0))
cases.append(("bomb_lying", "does not inflate"))
# ... and a ratio no deflate stream reaches
open(path("bomb_ratio"), "wb").write(raw_zip(b"Document.xml", b"\x03\x00", 2, 100 << 20, 0))
cases.append(("bomb_ratio", "not a plausible size"))
# a stored entry whose data runs past the end of the archive
data = b"<Document/>"
z = raw_zip(b"Document.xml", data, len(data), len(data), zlib.crc32(data), method=0)
z = bytearray(z)
struct.pack_into("<II", z, 18, 1 << 20, 1 << 20)  # local header sizes
cd = z.index(b"PK\x01\x02")
struct.pack_into("<II", z, cd + 20, 1 << 20, 1 << 20)
open(path("stored_past_end"), "wb").write(bytes(z))
cases.append(("stored_past_end", "runs past the end"))
# a bad CRC-32
open(path("bad_crc"), "wb").write(
    raw_zip(b"Document.xml", data, len(data), len(data), zlib.crc32(data) ^ 1, method=0))
cases.append(("bad_crc", "CRC-32"))
# an unsupported method
write("method", [("Document.xml", doc)] + shapes, "compression method", zipfile.ZIP_BZIP2)

# valid archives, hostile content
write("no_document", shapes, "no Document.xml")
write("bad_xml", [("Document.xml", doc[: len(doc) // 3])] + shapes, "line")
write("deep_xml", [("Document.xml", b"<a>" * 100000)], "nested")
long = b"x" * 400
write("long_name", [("Document.xml", doc.replace(b'name="Body"', b'name="' + long + b'"', 1))]
      + shapes, "over")
write("missing_shape", [("Document.xml", doc)], "not in the archive")
write("bad_shape", [("Document.xml", doc)] + [(n, b"CASCADE Topology V1, garbage\n" * 3)
                                             for n, _ in shapes], "shape")
write("binary_garbage", [("Document.xml", doc)] + [(n, os.urandom(4000)) for n, _ in shapes],
      "shape")
undeclared = doc.replace(b'<Object name="Body"', b'<Object name="Ghost"', 1)
write("undeclared", [("Document.xml", undeclared)] + shapes, "not declared")

for name, expect in cases:
    print("%s\t%s" % (name, expect))
