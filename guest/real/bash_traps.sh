# bash: traps on EXIT and ERR, and on a signal the script sends itself.
# run: /bin/bash
# xfail: guest signal handlers are not run yet (signals, issue item 4): the USR1 trap kills bash
trap 'echo "exit trap, status $?"' EXIT
trap 'echo "err trap at line $LINENO"' ERR
false
trap 'echo got USR1' USR1
kill -USR1 $$
echo after kill
exit 2
