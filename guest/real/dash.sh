# dash: functions, loops, case, arithmetic, pipes, subshells, here-docs,
# command substitution, traps on exit.
# run: /bin/dash
fact() { if [ $1 -le 1 ]; then echo 1; else echo $(( $1 * $(fact $(( $1 - 1 ))) )); fi; }
echo "fact 10 = $(fact 10)"
for w in apple banana cherry; do
  case $w in a*) echo "$w starts with a";; *an*) echo "$w has an";; *) echo "$w other";; esac
done
i=0; while [ $i -lt 5 ]; do i=$((i + 1)); printf '%d ' $i; done; echo
(cd /; pwd); pwd | wc -c >/dev/null
echo one two three | tr ' ' '\n' | sort -r | head -2
x=$( (echo sub; exit 3) ); echo "got $x status $?"
cat <<END
here-doc with $((6 * 7)) and $(echo expansion)
END
set -- a "b c" d; echo "$# args, second: $2"
trap 'echo exit trap' EXIT
false || echo "or branch"
exit 4
