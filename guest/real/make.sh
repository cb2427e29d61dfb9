# make: a small Makefile with pattern rules, variables, phony targets and
# dependencies; a failing recipe.
# needs: make
mkdir -p src
for n in a b c; do echo "content of $n" > src/$n.in; done
cat > Makefile <<'END'
SRCS := $(wildcard src/*.in)
OUTS := $(SRCS:src/%.in=out/%.out)
.PHONY: all clean fail
all: out/all.txt
out/%.out: src/%.in | out
	tr a-z A-Z < $< > $@
out:
	mkdir -p out
out/all.txt: $(OUTS)
	cat $^ > $@
	@echo "built $(notdir $@) from $(words $^) files"
fail:
	@echo about to fail
	@exit 3
END
make -s all
cat out/all.txt
make all
make -s fail; echo "status $?"
