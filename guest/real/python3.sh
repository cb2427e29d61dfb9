# python3: json, re, hashlib, decimal, zlib and struct.
# needs: python3
python3 - <<'END'
import decimal, hashlib, json, re, struct, zlib
data = {"name": "aarchx", "values": [i * i for i in range(20)], "nested": {"ok": True, "pi": 3.25}}
text = json.dumps(data, sort_keys=True)
print(text)
print(json.loads(text)["values"][7])
print(re.findall(r"(\w+)@(\w+)\.com", "a@b.com, c@d.com; bad@x.org"))
print(re.sub(r"(\d+)", lambda m: str(int(m.group(1)) * 2), "1 22 333"))
print(hashlib.sha256(b"aarchx").hexdigest())
print(hashlib.md5(text.encode()).hexdigest())
decimal.getcontext().prec = 40
print(decimal.Decimal(1) / decimal.Decimal(7))
print(sum(decimal.Decimal("0.1") for _ in range(10)))
blob = zlib.compress(text.encode() * 10, 9)
print(len(blob), zlib.decompress(blob) == text.encode() * 10, zlib.crc32(blob))
packed = struct.pack("<IhqdQ", 0xDEADBEEF, -2, -(1 << 40), 2.5, 1 << 63)
print(packed.hex(), struct.unpack("<IhqdQ", packed))
print(sorted({i % 7: i for i in range(50)}.items()))
print(f"{12345.6789:,.2f} {255:#x} {0.1 + 0.2!r}")
END
