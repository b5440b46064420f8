"""The PySpark report over chaos run directories (docs/pipeline.md): every run judged by
the chaos engine's invariants and cross-checked against its `verdict.json`, recovery and
latency figures per run, tables across runs by scenario and fault kind (also as Parquet),
matplotlib pictures and HTML pages read in a browser from disk: a front page, one page
per run with its timeline and an event browser. `python -m pipeline report`.

- `runs`: finding run directories, their configs, judging one run as the runner does.
- `schemas`: the explicit Spark schemas of the files read.
- `frames`: the files read into DataFrames; `verdicts`: one run's verdict.
- `run_pass`: the one Spark job, judging and measuring every run in one pass.
- `figures`: per-run measures (pandas); `metadata`: failover until metadata is current;
  `tables`: across-run tables (pandas).
- `plots`: the pictures; `report`: the whole report; `session`: the SparkSession.
- `index_page`: the front page (verdict grid, failing invariants, recovery plots);
  `run_page`: a run's page and event browser, from its `page_rows` row; `timeline`: the
  data its timeline draws; `witnesses`: a violation in words, links and times; `human`: times
  and values as the pages show them. The pages' scripts and style are `static/`.
- `comparison`: the page of a comparison of two builds, from its `summary.json`, no
  Spark; `pages`: the pages' templates; `comparison_testing`: a comparison for tests.
- `hunt_summary`: the blind bug hunts' summaries the front page shows;
  `hunt_testing`: a hunt's summary for tests.
- `testing`: synthetic run directories for tests; `run_writer`: the files they hold, also
  written by the benchmark's generator of runs at scale (`bench.pipeline.synthetic`).
"""
