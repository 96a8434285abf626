from pathlib import Path

import psycopg
import pytest

from repocontext.testing_pg import PostgresCluster, PostgresMissingError, find_postgres_bin


def test_missing_server_binaries_are_an_error_that_says_how_to_install_them(tmp_path: Path):
    with pytest.raises(PostgresMissingError) as info:
        find_postgres_bin(path=str(tmp_path), search_dirs=(str(tmp_path),))
    assert "apt-get install postgresql" in str(info.value)
    assert "/usr/lib/postgresql/15/bin" in str(info.value)


def test_the_debian_install_directory_is_found_when_path_lacks_the_binaries(tmp_path: Path):
    found = find_postgres_bin(path=str(tmp_path))
    assert (found / "initdb").is_file() and (found / "postgres").is_file()


def test_a_cluster_keeps_committed_data_through_a_kill_and_restart_and_is_removed_on_stop():
    cluster = PostgresCluster().start()
    root = cluster.root
    try:
        with psycopg.connect(cluster.url, autocommit=True) as conn:
            conn.execute("CREATE TABLE t (x int)")
            conn.execute("INSERT INTO t VALUES (7)")
        port = cluster.port
        cluster.kill()
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(cluster.url, connect_timeout=2)
        cluster.restart()
        assert cluster.port == port
        with psycopg.connect(cluster.url) as conn:
            assert conn.execute("SELECT x FROM t").fetchall() == [(7,)]
            assert conn.execute("SHOW listen_addresses").fetchone() == ("127.0.0.1",)
            assert conn.execute("SHOW fsync").fetchone() == ("on",)
    finally:
        cluster.stop()
    assert root is not None and not root.exists()
