#!/usr/bin/env bash
# grep --regex over stored lines of 50 KB (a tool result's one-line JSON): the patterns that
# overflowed std::regex's stack (exit 139) match in linear time, scanned and through the index,
# with and without -i; what RE2 syntax refuses (backreferences, lookaround) is exit 2 saying why.
source "$(dirname "$0")/lib.sh"
db="$WORK/g.db"
long=$(printf 'A%.0s' $(seq 1 50000))
ys=$(printf 'y%.0s' $(seq 1 50000))
{
  jq -cn --arg t "x${long}Z" '{id:"n1",session:"s",predecessor:null,kind:"message",role:"user",content:[{type:"text",text:$t}],metadata:{}}'
  jq -cn --arg t "$ys" '{id:"n2",session:"s",predecessor:"n1",kind:"message",role:"assistant",content:[{type:"text",text:$t}],metadata:{}}'
  jq -cn '{id:"n3",session:"s",predecessor:"n2",kind:"message",role:"user",content:[{type:"text",text:"short line\nthen AZ"}],metadata:{}}'
} > "$WORK/in.jsonl"
expect_rc "import" 0 "$CTXFOLD" --db "$db" import --format ctxfold "$WORK/in.jsonl"
ids() { jq -r 'select(.type=="match") | "\(.id):\(.offset)"' "$WORK/out" | xargs; }
for pass in scan index; do
  [ "$pass" = index ] && expect_rc "index" 0 "$CTXFOLD" --db "$db" index
  for i in "" -i; do
    expect_rc "$pass $i x|A+" 0 "$CTXFOLD" --db "$db" grep --regex $i 'x|A+'
    expect_eq "$pass $i x|A+ matches" "n1:0 n3:16" "$(ids)"
    expect_rc "$pass $i A.*Z" 0 "$CTXFOLD" --db "$db" grep --regex $i 'A.*Z'
    expect_eq "$pass $i A.*Z matches" "n1:1 n3:16" "$(ids)"
    expect_rc "$pass $i y+" 0 "$CTXFOLD" --db "$db" grep --regex $i 'y+'
    expect_eq "$pass $i y+ matches" "n2:0" "$(ids)"
    expect_rc "$pass $i (A|AA)*B finds nothing" 1 "$CTXFOLD" --db "$db" grep --regex $i '(A|AA)*B'
    expect_rc "$pass $i ^then per line" 0 "$CTXFOLD" --db "$db" grep --regex $i '^then A'
    expect_eq "$pass $i ^then matches" "n3:11" "$(ids)"
  done
done
expect_rc "a backreference is exit 2" 2 "$CTXFOLD" --db "$db" grep --regex '(A)\1'
grep -q "backreferences" "$WORK/err" && ok || fail "backreference message: $(cat "$WORK/err")"
expect_rc "lookahead is exit 2" 2 "$CTXFOLD" --db "$db" grep --regex 'A(?=Z)'
grep -q "lookaround" "$WORK/err" && ok || fail "lookahead message: $(cat "$WORK/err")"
expect_rc "RE2 syntax: \\Q...\\E" 0 "$CTXFOLD" --db "$db" grep --regex '\Qshort line\E'
expect_eq "\\Q...\\E matches" "n3:0" "$(ids)"
finish
