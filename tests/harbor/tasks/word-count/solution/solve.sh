#!/bin/sh
wc -w < data/poem.txt | tr -d ' ' > answer.txt
