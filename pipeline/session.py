"""The pipeline's one SparkSession per process: `local[2]` by default, any cluster by its
master URL, with the same job code. Runs on the driver's main thread.

The input files, given one by one, are listed on the driver. Quiet by design: a log4j2
configuration of warnings only (`log4j2.properties` beside this module), Spark's console
progress bar kept so that long jobs show where they are. On a cluster, the project's
packages the jobs import (`SHIPPED_PACKAGES`) are zipped and sent to the executors, and
the executors run the same Python interpreter path as the driver (`spark.pyspark.python`),
so the workers need the venv at that path (docs/pipeline.md).
"""

from __future__ import annotations

import os
import sys
import tempfile
import warnings
import zipfile
from pathlib import Path

from pyspark.sql import SparkSession

__all__ = ["DEFAULT_MASTER", "SHIPPED_PACKAGES", "code_archive", "spark_session"]

DEFAULT_MASTER = "local[2]"
#: The project's packages that code running on executors imports.
SHIPPED_PACKAGES = ("pipeline", "rundir", "eventlog", "zkdata", "domain")
#: Few shuffle partitions: the data of even hundreds of runs is small.
SHUFFLE_PARTITIONS = 2
#: The driver's heap (in local mode the executors' too): room for the cached frames of a
#: million records without the JVM collecting garbage most of the time (Spark's 1g
#: default does not hold them).
DRIVER_MEMORY = "3g"
#: Above this many paths Spark would list files in a job of its own.
LISTING_JOB_FILES = 1_000_000
LOG_CONFIG = Path(__file__).with_name("log4j2.properties")
ROOT = Path(__file__).resolve().parent.parent


def code_archive(directory: Path) -> Path:
    """Zip the shipped packages' Python files into `directory`; returns the zip's path."""
    archive = directory / "testbed-packages.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for package in SHIPPED_PACKAGES:
            for path in sorted((ROOT / package).rglob("*")):
                if path.suffix in (".py", ".html", ".j2", ".properties", ".xml") and path.is_file():
                    zf.write(path, path.relative_to(ROOT).as_posix())
    return archive


def spark_session(master: str = DEFAULT_MASTER, app_name: str = "chaos-report") -> SparkSession:
    """The process's session (created on the first call, reused after). A master other
    than `local[...]` gets the project's code shipped with the job."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
    warnings.filterwarnings("ignore", message="The copy keyword is deprecated")
    java_options = f"-Dlog4j2.configurationFile={LOG_CONFIG.as_uri()}"
    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.driver.memory", DRIVER_MEMORY)
        .config("spark.sql.shuffle.partitions", str(SHUFFLE_PARTITIONS))
        # the files are given one by one: list them on the driver, not in a Spark job
        .config("spark.sql.sources.parallelPartitionDiscovery.threshold", str(LISTING_JOB_FILES))
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "true")
        .config("spark.driver.extraJavaOptions", java_options)
        .config("spark.executor.extraJavaOptions", java_options)
        .config("spark.pyspark.python", sys.executable)
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
    )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    if not master.startswith("local"):
        archive = code_archive(Path(tempfile.mkdtemp(prefix="pipeline-code-")))
        spark.sparkContext.addPyFile(str(archive))
    return spark
