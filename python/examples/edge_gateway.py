#!/usr/bin/env python3
"""edge_gateway.py: buffer sensor readings on disk, ship them when the uplink is up.

    edge_gateway.py collect LOG [--retain-bytes N] [--batch N]  < readings
    edge_gateway.py ship LOG RECEIVER.db [--batch N] [--idle SECONDS]

`collect` reads lines "SENSOR:VALUE" from stdin and appends each as a record
keyed by its sensor, in batches (append_many, then one flush per batch).
The log is created with a size limit (retain_bytes, default 256 KiB); after
every batch, retain() drops the oldest closed segments beyond it, so that a
box whose uplink is down for days never fills its disk.

`ship` is the uplink: the named consumer "uplink" reads from just after its
committed offset (read(group="uplink")), sends each batch to the receiver
and commits the batch's last offset once the receiver has it.  A crash
anywhere resumes after the last commit: at least once.  The receiver (here
a SQLite database standing in for the far side) drops repeats by the
idempotency key "<log id>:<offset>", a unique column, so each reading lands
there once.  It ends after --idle seconds without new readings.  Readings
that retention removed before they were shipped are reported (the
consumer's `lost`), not silently skipped.
"""

import argparse
import sqlite3
import sys

import elog


def collect(path, retain_bytes, batch):
    with elog.Log.open(path, writer=True, retain_bytes=retain_bytes, segment_bytes=16384,
                       cleanup="delete") as log:
        pending = []

        def put():
            log.append_many(pending)
            log.flush()
            pending.clear()
            log.retain()  # the log's stored limit, beside any shipper

        for line in sys.stdin:
            sensor, _, value = line.rstrip("\n").partition(":")
            pending.append((sensor, value))
            if len(pending) == batch:
                put()
        if pending:
            put()


def receiver(path):
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE IF NOT EXISTS readings (id TEXT PRIMARY KEY, log_offset INTEGER, "
               "sensor TEXT, value TEXT)")
    return db


def ship(path, db_path, batch, idle):
    log = elog.Log.open(path)
    log_id = log.settings()["id"]
    db = receiver(db_path)
    sent = []

    def send():
        with db:  # the far side's transaction; a repeat is ignored
            db.executemany("INSERT OR IGNORE INTO readings VALUES (?, ?, ?, ?)", sent)
        log.commit("uplink", sent[-1][1])  # acknowledged by the far side
        sent.clear()

    for rec in log.read(group="uplink", follow=True, idle=idle):
        sent.append((f"{log_id}:{rec.offset}", rec.offset, rec.key.decode(), rec.value.decode()))
        if len(sent) == batch:
            send()
    if sent:
        send()
    c = log.consumer("uplink")
    if c is not None and c.lost:
        print(f"edge_gateway: retention removed {c.lost} readings before they were shipped "
              f"(offsets {c.lost_first}-{c.lost_last})", file=sys.stderr)
        log.ack_loss("uplink")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("log")
    c.add_argument("--retain-bytes", type=int, default=256 * 1024)
    c.add_argument("--batch", type=int, default=100)
    s = sub.add_parser("ship")
    s.add_argument("log")
    s.add_argument("receiver")
    s.add_argument("--batch", type=int, default=50)
    s.add_argument("--idle", type=float, default=1.0)
    a = ap.parse_args()
    try:
        if a.cmd == "collect":
            collect(a.log, a.retain_bytes, a.batch)
        else:
            ship(a.log, a.receiver, a.batch, a.idle)
    except elog.ElogError as e:
        sys.exit(f"edge_gateway: {e}")


if __name__ == "__main__":
    main()
