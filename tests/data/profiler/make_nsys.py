#!/usr/bin/env python3
"""Nsight Systems exports derived from the real PyTorch profiler traces of cpu_1f1b/ and cpu_gpipe/.

  python3 make_nsys.py SOURCE_DIR OUT_DIR

For each SOURCE_DIR/rankR.pt.trace.json.gz (written by make_traces.py) writes OUT_DIR/rankR.sqlite
with the tables and columns of a real `nsys export --type sqlite` (StringIds, NVTX_EVENTS,
TARGET_INFO_SYSTEM_ENV, as in nsys/saxpy.sqlite): every complete ("X") event of the trace, the
record_function ranges and ops alike, becomes an NVTX push/pop range (eventType 59) of the same
name, start and end (microseconds -> nanoseconds) on one thread of one process, and the
environment holds RANK=R;WORLD_SIZE=N as torchrun sets it. No kernels: the run was CPU only.

The same measurement in two formats: `ppsim profile` must give the same steps, stages and order
for both (tests/cli/profile_test.cc). Uses only python3's sqlite3 module.
"""
import glob
import gzip
import json
import os
import re
import sqlite3
import sys

# The schemas as Nsight Systems 2022.2 writes them (sqlite3 nsys/saxpy.sqlite '.schema TABLE').
SCHEMA = """
CREATE TABLE StringIds (
    id                          INTEGER   NOT NULL   PRIMARY KEY,
    value                       TEXT      NOT NULL
);
CREATE TABLE NVTX_EVENTS (
    start                       INTEGER   NOT NULL,
    end                         INTEGER,
    eventType                   INTEGER   NOT NULL,
    rangeId                     INTEGER,
    category                    INTEGER,
    color                       INTEGER,
    text                        TEXT,
    globalTid                   INTEGER,
    endGlobalTid                INTEGER,
    textId                      INTEGER   REFERENCES StringIds(id),
    domainId                    INTEGER,
    uint64Value                 INTEGER,
    int64Value                  INTEGER,
    doubleValue                 REAL,
    uint32Value                 INTEGER,
    int32Value                  INTEGER,
    floatValue                  REAL,
    jsonTextId                  INTEGER,
    jsonText                    TEXT
);
CREATE TABLE TARGET_INFO_SYSTEM_ENV (
    globalVid                   INTEGER   NOT NULL,
    devStateName                TEXT      NOT NULL,
    name                        TEXT      NOT NULL,
    nameEnum                    INTEGER   NOT NULL,
    value                       TEXT      NOT NULL
);
"""
NVTX_PUSH_POP_RANGE = 59


def convert(source, out, rank, world):
    with gzip.open(source, "rt") as f:
        events = json.load(f)
    if isinstance(events, dict):
        events = events["traceEvents"]
    pid = 1000 + rank
    global_tid = (pid << 24) | pid  # serialized GlobalId: process in bits 24.., thread below
    if os.path.exists(out):
        os.remove(out)
    db = sqlite3.connect(out)
    db.executescript(SCHEMA)
    db.execute("INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (?, ?, ?, ?, ?)",
               (281474976710656, "Local (CLI)", "DeviceEnvironment", 610,
                "RANK=%d;WORLD_SIZE=%d" % (rank, world)))
    rows = []
    for e in events:
        if e.get("ph") != "X":
            continue
        start = round(e["ts"] * 1000)
        rows.append((start, start + round(e.get("dur", 0) * 1000), NVTX_PUSH_POP_RANGE,
                     e["name"], global_tid, 0))
    db.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
                   "VALUES (?, ?, ?, ?, ?, ?)", rows)
    db.commit()
    db.execute("VACUUM")
    db.close()


def main():
    source_dir, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    sources = sorted(glob.glob(os.path.join(source_dir, "rank*.pt.trace.json.gz")))
    for source in sources:
        rank = int(re.search(r"rank(\d+)", os.path.basename(source)).group(1))
        convert(source, os.path.join(out_dir, "rank%d.sqlite" % rank), rank, len(sources))


if __name__ == "__main__":
    main()
