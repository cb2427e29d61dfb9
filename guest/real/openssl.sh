# openssl at cpu_level V2, where CPUID reports AES-NI and PCLMULQDQ and
# libcrypto takes its AES-NI paths: AES-128 in CTR and ECB modes and
# AES-256 in CBC mode over generated data, decryption back, an HMAC; and
# once with OPENSSL_ia32cap turning the AES-NI bit off, so the same data
# also goes through the table-based code.
# needs: openssl sha256sum
# policy: v2.ron
awk 'BEGIN { for (i = 0; i < 20000; i++) printf "%d %x line %d\n", i * 7919 % 10007, i * 31, i }' > data.txt
K=000102030405060708090a0b0c0d0e0f
IV=f0e0d0c0b0a090807060504030201000
openssl enc -aes-128-ctr -K $K -iv $IV -in data.txt -out ctr.bin
openssl enc -aes-256-cbc -K $K$K -iv $IV -in data.txt -out cbc.bin
openssl enc -aes-128-ecb -K $K -in data.txt -out ecb.bin
sha256sum ctr.bin cbc.bin ecb.bin
openssl enc -d -aes-128-ctr -K $K -iv $IV -in ctr.bin | cmp - data.txt && echo "ctr round trip equal"
openssl enc -d -aes-256-cbc -K $K$K -iv $IV -in cbc.bin | cmp - data.txt && echo "cbc round trip equal"
OPENSSL_ia32cap="~0x200000000000000" openssl enc -aes-128-ctr -K $K -iv $IV -in data.txt | cmp - ctr.bin && echo "without AES-NI: same ciphertext"
openssl dgst -sha256 -hmac aarchx -r data.txt
