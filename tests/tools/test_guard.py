"""The sysadmin guard: catastrophic commands are refused, ordinary ones are not."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zcoder.tools import classify_command

WORKSPACE = "/srv/work/project"

DANGEROUS = [
    "rm -rf /",
    "rm -fr /*",
    "rm -r /",
    "rm -R -f /",
    "rm --recursive --force /",
    "rm -rf -- /",
    "rm -rf --no-preserve-root /",
    "rm -rf /etc",
    "rm -rf /usr/",
    "rm -rf /usr/*",
    "rm -rf /bin /tmp/x",
    "rm -rf /sbin",
    "rm -rf /lib64",
    "rm -rf /boot",
    "rm -rf /var",
    "rm -rf /root",
    "rm -rf /home",
    "rm -rf //etc",
    "rm -rf /etc/../",
    "rm -rf /e*",
    "rm -rf ~",
    "rm -rf ~/",
    "rm -rf ~/*",
    "rm -rf $HOME",
    "rm -rf ${HOME}/",
    "rm -rf .",
    "rm -rf ./",
    "rm -rf *",
    "rm -rf ./*",
    "rm -rf .*",
    "rm -rf ..",
    f"rm -rf {WORKSPACE}",
    f"rm -rf {WORKSPACE}/",
    f"rm -rf {WORKSPACE}/*",
    "rm -rf /srv/work",
    "rm -rf $PWD",
    "rm -rf $TARGET/",
    "chmod -R 777 /",
    "chmod -R 000 /etc",
    "chmod --recursive a+w ~",
    "chown -R nobody /usr",
    "chown -R me:me ..",
    "chgrp -R staff /var",
    "mkfs /dev/sda1",
    "mkfs.ext4 /dev/sdb",
    "mkfs.vfat -F 32 /dev/mmcblk0p1",
    "mke2fs /dev/sda",
    "wipefs -a /dev/sda",
    "dd if=/dev/zero of=/dev/sda bs=1M",
    "dd if=image.iso of=/dev/nvme0n1",
    "echo hi > /dev/sda",
    "cat /dev/urandom >/dev/sda1",
    "cat x >> /dev/vda",
    "echo x | sudo tee /dev/sda",
    "cp disk.img /dev/sdb",
    "shred -n 1 /dev/nvme0n1",
    ":(){ :|:& };:",
    ":() { : | : & }; :",
    "bomb(){ bomb|bomb& };bomb",
    "shutdown -h now",
    "reboot",
    "/sbin/halt",
    "poweroff",
    "systemctl reboot",
    "init 0",
    # wrapped
    "sh -c 'rm -rf /'",
    'bash -c "rm -rf ~"',
    "bash -lc 'rm -rf /etc'",
    "zsh -c 'mkfs.ext4 /dev/sda'",
    "eval 'rm -rf /'",
    "eval rm -rf /",
    "sudo rm -rf /",
    "sudo -u root rm -rf /var",
    "sudo -E env X=1 rm -rf /",
    "env X=1 rm -rf /",
    "env -i PATH=/bin rm -rf /",
    "X=1 Y=2 rm -rf /",
    "nohup rm -rf / &",
    "timeout 10 rm -rf /",
    "nice -n 5 rm -rf /usr",
    "/bin/rm -rf /",
    "command rm -rf /",
    "ls; rm -rf /",
    "ls && rm -rf /",
    "false || rm -rf /",
    "echo y | rm -rf /",
    "echo ok & rm -rf /",
    "cd /tmp\nrm -rf /",
    "(rm -rf /)",
    "{ rm -rf /; }",
    "echo $(rm -rf /)",
    'echo "$(rm -rf /)"',
    "echo `rm -rf /`",
    "sudo sh -c 'cd / && rm -rf *'",
    "sh -c \"bash -c 'eval rm -rf /'\"",
    "su -c 'rm -rf /'",
    "sudo sh -c 'dd if=/dev/zero of=/dev/sda'",
    "env -S 'rm -rf /'",
    "ls | xargs rm -rf /",
    # unparseable: fail closed
    "rm -rf '/",
    'echo "unterminated',
    "ls\x00",
]

HARMLESS = [
    "ls -la",
    "git status",
    "rm file.txt",
    "rm -f build.log",
    "rm -rf build",
    "rm -rf ./build",
    "rm -rf node_modules",
    "rm -rf /tmp/scratch",
    "rm -rf /var/log/myapp/old",
    "rm -rf ~/.cache/pip",
    "rm -r /home/alice/tmp",
    f"rm -rf {WORKSPACE}/build",
    "chmod 644 /etc/hosts",
    "chmod -R g+w src",
    # the workspace is the user's to change (issue 18)
    "chown -R me:me .",
    "chmod -R 755 .",
    "chown -R www-data /var/www/site",
    "dd if=/dev/zero of=disk.img bs=1M count=10",
    "dd if=/dev/sda of=backup.img",
    "echo hi > /dev/null",
    "cp /dev/null empty.txt",
    "echo x | tee out.log",
    "cat /dev/sda | head -c 512 | xxd",
    "make 2>/dev/null",
    "cat /etc/os-release",
    "systemctl status nginx",
    "systemctl restart nginx",
    "sudo apt-get update",
    "sh -c 'echo hello'",
    "bash script.sh",
    "eval echo hi",
    "echo 'rm -rf /'",
    "grep -r 'shutdown' .",
    "find . -name '*.pyc' -delete",
    "python -c 'print(1)'",
    "echo done && ls",
    "df -h; free -m",
    "journalctl -u ssh | tail",
]


@pytest.mark.parametrize("command", DANGEROUS)
def test_dangerous_commands_are_refused(command: str) -> None:
    reason = classify_command(command, workspace=WORKSPACE)
    assert reason is not None, command
    assert isinstance(reason, str) and reason


@pytest.mark.parametrize("command", HARMLESS)
def test_harmless_commands_pass(command: str) -> None:
    assert classify_command(command, workspace=WORKSPACE) is None, command


def test_parse_errors_give_a_reason() -> None:
    reason = classify_command("echo 'oops")
    assert reason is not None and "parse" in reason


def test_reason_names_the_problem() -> None:
    reason = classify_command("sudo bash -c 'rm -rf /etc'")
    assert reason is not None and "/etc" in reason


def test_without_workspace_only_relative_forms_cover_it() -> None:
    assert classify_command(f"rm -rf {WORKSPACE}") is None
    assert classify_command("rm -rf .") is not None


def test_deep_nesting_fails_closed() -> None:
    command = "true"
    for _ in range(20):
        command = f"sh -c {command!r}"
    assert classify_command(command) is not None


@settings(max_examples=400)
@given(st.text())
def test_guard_never_raises_on_arbitrary_text(text: str) -> None:
    result = classify_command(text, workspace=WORKSPACE)
    assert result is None or isinstance(result, str)


SHELLISH = st.lists(
    st.sampled_from(
        [
            "rm", "-rf", "-r", "/", "~", ".", "*", "sh", "-c", "bash", "eval", "sudo", "env",
            "X=1", ";", "&&", "||", "|", "&", "'", '"', "$(", ")", "`", "(", "{", "}", ">",
            "/dev/sda", "dd", "of=/dev/sda", "mkfs", "\\", "\n", "#", "$HOME", "--", "<<",
        ]
    ),
    max_size=12,
).map(" ".join)  # fmt: skip


@settings(max_examples=400)
@given(SHELLISH)
def test_guard_never_raises_on_shell_like_text(text: str) -> None:
    result = classify_command(text, workspace=WORKSPACE)
    assert result is None or isinstance(result, str)


@given(st.sampled_from(["rm -rf /", "mkfs /dev/sda", "reboot", "rm -rf ~"]), st.sampled_from(
    ["sh -c {!r}", "bash -c {!r}", "eval {!r}", "sudo {}", "env A=1 {}", "true && {}",
     "false || {}", "ls; {}", "echo | {}", "sudo sh -c {!r}"]
))  # fmt: skip
def test_wrapped_dangerous_commands_stay_refused(command: str, wrapper: str) -> None:
    assert classify_command(wrapper.format(command)) is not None
