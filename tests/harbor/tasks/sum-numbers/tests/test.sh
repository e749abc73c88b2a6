#!/bin/sh
# reward 1 when answer.txt holds the sum, else 0
want=$(awk '{ s += $1 } END { print s }' /app/numbers.txt)
got=$(cat /app/answer.txt 2>/dev/null | tr -d ' \n')
echo "want $want got $got"
if [ -n "$got" ] && awk -v a="$got" -v b="$want" 'BEGIN { exit !(a == b) }'; then
	echo 1 > /logs/verifier/reward.txt
else
	echo 0 > /logs/verifier/reward.txt
fi
