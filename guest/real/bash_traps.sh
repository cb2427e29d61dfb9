# bash: traps on EXIT and ERR, on signals the script sends itself (several
# times, in a subshell), a trap reset and an ignored signal.
# run: /bin/bash
trap 'echo "exit trap, status $?"' EXIT
trap 'echo "err trap at line $LINENO"' ERR
false
trap 'echo got USR1' USR1
kill -USR1 $$
echo after kill
trap 'echo got ALRM; n=$((n + 1))' ALRM
n=0
for i in 1 2 3; do kill -ALRM $$; done
echo "ALRM trapped $n times"
(
    trap 'echo subshell got TERM; exit 3' TERM
    kill -TERM $BASHPID
    echo not reached
)
echo "subshell status $?"
trap - USR1
trap '' USR2
kill -USR2 $$
echo USR2 ignored
exit 2
