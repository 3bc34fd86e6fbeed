#!/bin/sh
# naps.sh N: run `sleep 0` N times, one process each (the sleeper benchmark's workload;
# each makes one clock_nanosleep call, the system call its traced runs count).
n=${1:?usage: naps.sh N}
i=0
while [ "$i" -lt "$n" ]; do
    sleep 0
    i=$((i + 1))
done
