import os
import signal
import sys
from pathlib import Path

from lattice_runtime.compile.task import VerificationCommand
from lattice_runtime.verify import (
    EXIT_NOT_STARTED,
    EXIT_TIMEOUT,
    TAIL_CHARS,
    command_env,
    run_command,
)
from tests.lattice_runtime.verify_support import exits_within


def python(code: str, *args: str) -> VerificationCommand:
    return VerificationCommand((sys.executable, "-c", code, *args))


def run(command: VerificationCommand, cwd: Path, **kwargs):
    return run_command(command, cwd, env=command_env(cwd), **kwargs)


def test_a_passing_command_exits_zero_with_its_output_merged(tmp_path):
    code = "import sys; print('out'); print('err', file=sys.stderr)"
    result = run(python(code), tmp_path)
    assert result.exit_code == 0
    assert result.passed
    assert not result.timed_out
    assert "out" in result.output_tail
    assert "err" in result.output_tail


def test_a_failing_command_keeps_its_exit_code_and_output(tmp_path):
    result = run(python("import sys; print('broken'); sys.exit(3)"), tmp_path)
    assert result.exit_code == 3
    assert not result.passed
    assert "broken" in result.output_tail


def test_the_command_runs_in_the_given_directory(tmp_path):
    result = run(python("import os; print(os.getcwd())"), tmp_path)
    assert result.output_tail.strip() == str(tmp_path)


def test_a_command_that_hangs_is_killed_at_the_deadline_with_exit_124(tmp_path):
    blocks_forever = "import os; r, w = os.pipe(); print('started', flush=True); os.read(r, 1)"
    result = run(python(blocks_forever), tmp_path, timeout_seconds=0.5)
    assert result.exit_code == EXIT_TIMEOUT
    assert result.timed_out
    assert "started" in result.output_tail


def test_the_deadline_kills_the_whole_process_group(tmp_path):
    # The grandchild would block forever on its own pipe: only the group kill ends it. SIGKILL
    # is delivered asynchronously, so wait (bounded, on its pidfd) for it to be gone.
    code = (
        "import subprocess, sys, os\n"
        "grandchild = subprocess.Popen([sys.executable, '-c', 'import os; r, w = os.pipe(); "
        "os.read(r, 1)'])\n"
        "print('grandchild', grandchild.pid, flush=True)\n"
        "r, w = os.pipe(); os.read(r, 1)\n"
    )
    # 5 s: the child must start Python, spawn the grandchild and print before the deadline,
    # even on a loaded machine (1 s was not always enough there).
    result = run(python(code), tmp_path, timeout_seconds=5.0)
    assert result.exit_code == EXIT_TIMEOUT
    pid = int(result.output_tail.split("grandchild", 1)[1].split()[0])
    assert exits_within(pid, seconds=10)


def test_a_program_that_cannot_start_exits_127_with_the_reason(tmp_path):
    result = run(VerificationCommand(("no-such-program-lattice",)), tmp_path)
    assert result.exit_code == EXIT_NOT_STARTED
    assert "no-such-program-lattice" in result.output_tail


def test_a_command_killed_by_a_signal_exits_128_plus_the_signal(tmp_path):
    result = run(python("import os, signal; os.kill(os.getpid(), signal.SIGTERM)"), tmp_path)
    assert result.exit_code == 128 + signal.SIGTERM


def test_arguments_reach_the_program_verbatim_without_a_shell(tmp_path):
    literal = "$HOME && echo injected; `id`"
    result = run(python("import sys; print(sys.argv[1])", literal), tmp_path)
    assert result.output_tail.strip() == literal


def test_only_the_last_characters_of_the_output_are_kept(tmp_path):
    code = "print('x' * 20000 + 'é' * 10 + 'END', end='')"
    result = run(python(code), tmp_path)
    assert len(result.output_tail) == TAIL_CHARS
    assert result.output_tail.endswith("é" * 10 + "END")


def test_undecodable_output_is_kept_with_replacement_characters(tmp_path):
    result = run(python("import sys; sys.stdout.buffer.write(b'ok \\xff\\xfe')"), tmp_path)
    assert result.output_tail == "ok \ufffd\ufffd"


def test_the_duration_is_measured_on_the_injected_clock(tmp_path):
    ticks = iter((100.0, 102.5))
    result = run(python("pass"), tmp_path, clock=lambda: next(ticks))
    assert result.duration_seconds == 2.5


def test_the_environment_disables_bytecode_and_puts_the_repository_venv_first(tmp_path):
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    env = command_env(tmp_path, {"PATH": "/usr/bin", "KEEP": "1"})
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert env["KEEP"] == "1"
    runtime_bin = str(Path(sys.executable).parent)
    assert env["PATH"].split(os.pathsep) == [
        str((tmp_path / ".venv" / "bin").resolve()),
        runtime_bin,
        "/usr/bin",
    ]
    without_venv = command_env(tmp_path / "no-venv", {"PATH": "/usr/bin"})["PATH"]
    assert without_venv.split(os.pathsep) == [runtime_bin, "/usr/bin"]


def test_a_command_sees_the_environment_it_is_given(tmp_path):
    env = {**command_env(tmp_path), "LATTICE_PROBE": "seen"}
    code = "import os; print(os.environ['LATTICE_PROBE'], os.environ['PYTHONDONTWRITEBYTECODE'])"
    result = run_command(python(code), tmp_path, env=env)
    assert result.output_tail.split() == ["seen", "1"]
