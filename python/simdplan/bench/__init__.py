"""simdplan.bench: benchmark harnesses behind ``simdplan bench`` (robots of different shape, side by side).

mbm: MotionBenchMaker runs, summaries and report; multi_robot and robots: generated problems on
robots of different shape; records: per-problem records and statistics shared by both;
vamp_baseline: VAMP on the same problems in the same run, where it is installed.
"""
