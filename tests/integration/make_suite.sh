#!/usr/bin/env bash
# make_suite.sh DIR N SLEEP_S [RESOURCE]
# Writes a suite of N small tasks into DIR: each reference sleeps SLEEP_S,
# then writes a closed unit tetrahedron as ASCII STL (volume 1/6); a flawed
# variant 'open' leaves a face out. With RESOURCE, every task holds one
# token of it. Fast, deterministic episodes for scheduler and resume tests.
set -euo pipefail
dir=$1 n=$2 sleep_s=$3 res=${4:-}
mkdir -p "$dir"
stl_face() { printf ' facet normal 0 0 0\\n  outer loop\\n   vertex %s\\n   vertex %s\\n   vertex %s\\n  endloop\\n endfacet\\n' "$1" "$2" "$3"; }
closed="solid t\\n$(stl_face '0 0 0' '0 1 0' '1 0 0')$(stl_face '0 0 0' '1 0 0' '0 0 1')$(stl_face '0 0 0' '0 0 1' '0 1 0')$(stl_face '1 0 0' '0 1 0' '0 0 1')endsolid t\\n"
open="solid t\\n$(stl_face '0 0 0' '0 1 0' '1 0 0')$(stl_face '0 0 0' '1 0 0' '0 0 1')$(stl_face '0 0 0' '0 0 1' '0 1 0')endsolid t\\n"
resources=""
[ -n "$res" ] && resources=", \"resources\": {\"$res\": 1}"
for i in $(seq -w 1 "$n"); do
  cat > "$dir/tetra-$i.json" <<JSON
{
  "id": "tetra-$i",
  "domain": "CAD",
  "software": ["sh"],
  "type": "single",
  "interface": "cli",
  "instruction": "Write a closed unit tetrahedron with vertices at the origin and the three unit points to tetra.stl.",
  "deliverables": [{"path": "tetra.stl"}],
  "verifier": {
    "kind": "mesh",
    "file": "tetra.stl",
    "criteria": [
      {"name": "closed", "check": "watertight"},
      {"name": "volume", "check": "volume", "value": 0.16666666666666666, "tol_rel": 0.001}
    ]
  },
  "reference": [
    {"run": "sleep $sleep_s"},
    {"write": "tetra.stl", "text": "$closed"}
  ],
  "flawed": [
    {"name": "open", "steps": [{"write": "tetra.stl", "text": "$open"}], "expect": "fail", "failing": ["closed"]}
  ]$resources
}
JSON
done
