"""The Trio drivers of trimcp: the only package that imports trio.

Each transport is a thin driver behind one seam, ``stream.MessageStream``; the
protocol logic lives in the pure ``trimcp._sansio`` layer below.
"""
