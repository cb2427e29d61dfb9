# bash: pipes, subshells, command and process substitution, here-docs and
# here-strings, redirections, exit statuses.
# run: /bin/bash
printf '%s\n' {1..100} | awk '{ s += $1 } END { print s }'
total=$(printf '%s\n' {1..10} | paste -sd+); echo "total $((total))"
( cd /; echo "in $(pwd)" ); echo "back in subshell-free shell: $(basename "$PWD" | wc -c | tr -d ' ')"
while read -r a b; do echo "$b-$a"; done <<EOF2
x 1
y 2
EOF2
tr a-z A-Z <<< "here string"
diff <(printf '%s\n' {1..5}) <(printf '%s\n' {1..6}); echo "diff $?"
{ echo out; echo err >&2; } 2>&1 | sort
false | true; echo "pipe status ${PIPESTATUS[*]}"
set -o pipefail; false | true; echo "pipefail $?"
exec 3> fd3.txt; echo "to fd3" >&3; exec 3>&-; cat fd3.txt
echo "$(echo "$(echo nested)")"
