#!/bin/sh
# a continuous reward: 1 for the count, less the further off it is; the
# reasons are text, which Harbor's reward.json readers differ on
got=$(tr -d ' \n' < answer.txt 2>/dev/null)
case "$got" in
''|*[!0-9]*) printf '{"reward": 0, "exact": 0, "reason": "no count"}\n' > /logs/verifier/reward.json; exit 0 ;;
esac
awk -v g="$got" -v w="$EXPECTED_WORDS" 'BEGIN {
	d = g - w; if (d < 0) d = -d; r = 1 - d / w; if (r < 0) r = 0
	printf "{\"reward\": %g, \"exact\": %d, \"reason\": \"counted %d of %d\"}\n", r, d == 0, g, w
}' > /logs/verifier/reward.json
