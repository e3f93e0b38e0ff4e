#!/bin/sh
# A stand-in for a person: SPEAR passes the WRITE request as JSON on stdin;
# exit 0 approves, anything else refuses. A real one would ask on the
# terminal and wait for the answer; this one shows the request and says yes.
request=$(cat)
{
	echo "[confirmation] a person is asked to approve: $request"
	echo "[confirmation] approved"
} >/dev/tty 2>/dev/null || true
exit 0
