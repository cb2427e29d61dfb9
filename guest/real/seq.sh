# seq: integer and fractional sequences, formats and separators.
seq 1 5
seq -s, 10 -3 -5
seq -w 8 11
seq 0 0.25 1
seq -f '%.3e' 1 2 5
