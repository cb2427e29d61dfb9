# bash: loops, arithmetic, arrays, associative arrays, functions, strings.
# run: /bin/bash
declare -a squares
for ((i = 0; i < 12; i++)); do squares[i]=$((i * i)); done
echo "${squares[@]}"; echo "count ${#squares[@]} last ${squares[-1]}"
declare -A color=([apple]=red [banana]=yellow [grape]=purple)
for k in $(printf '%s\n' "${!color[@]}" | sort); do echo "$k=${color[$k]}"; done
gcd() { local a=$1 b=$2; while ((b)); do ((t = b, b = a % b, a = t)); done; echo $a; }
echo "gcd $(gcd 1071 462)"
s="Hello, World"; echo "${s,,} ${s^^} ${s:7} ${s/World/There} ${#s}"
n=0; until ((n >= 40)); do ((n += 7)); done; echo "until $n"
echo $(( 2 ** 20 )) $(( -17 / 5 )) $(( -17 % 5 )) $(( 0x1f | 0100 ))
words=(one two three four); echo "${words[@]:1:2}"
[[ "abc123" =~ ^([a-z]+)([0-9]+)$ ]] && echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"
