# git: init, add, commit, log, diff with fixed dates and identity.
# needs: git
export GIT_AUTHOR_NAME=Tester GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=Tester GIT_COMMITTER_EMAIL=t@example.com
export GIT_AUTHOR_DATE='2020-01-01T00:00:00Z' GIT_COMMITTER_DATE='2020-01-01T00:00:00Z'
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
git init -q -b main repo
cd repo
printf 'one\ntwo\n' > a.txt; git add a.txt; git commit -q -m "first commit"
printf 'one\ntwo\nthree\n' > a.txt; echo new > b.txt; git add .; git commit -q -m "second commit"
git log --format='%H %an %ad %s' --date=iso-strict
git diff HEAD~1 --stat
git show HEAD:a.txt
git status --short; echo "status $?"
git cat-file -p HEAD | head -2
