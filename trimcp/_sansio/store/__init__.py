"""The decisions behind the server's shared store, without I/O (issue 30: replicas).

Theory of operation
-------------------
A server that runs as several replicas keeps what they must agree on in one
store (``trimcp.server.store``: in memory, SQLite or Redis).  What the store
decides - which session makes room for a new one, which are idle, what a
resumed stream may replay, when a replica's lease has lapsed, what goes on the
replicas' message bus - is decided here, on plain data, so that every backend
decides it the same way and the rules can be tested without one:

* ``records``: a handshake-era session as every replica needs it
  (negotiated revision, client identity and capabilities, log level,
  subscriptions, activity), as JSON data;
* ``sessions``: the session cap and the idle timeout, as decisions;
* ``stream_log``: one SSE stream's event log with its replay cursor
  (spec 2025-11-25, basic/transports, "Resumability and Redelivery");
* ``bus``: the messages replicas publish to one another;
* ``location``: the ``--store`` URL (``memory``, ``sqlite:///PATH``,
  ``redis://HOST:PORT/DB``).

The task table's moves are ``trimcp._sansio.task_table``.
"""
