"""Keys in the scaled mode come from the environment; the embedded default keeps making its own.

Each case runs the real settings in a fresh interpreter, as a worker on another host would."""
import os
import subprocess
import sys

from tests.conftest import ROOT

PRINT_KEY = "from django.conf import settings; print(settings.SECRET_KEY)"


def python(code: str, *, data_dir, **env) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items()
                   if not k.startswith(("PYTEST", "AGENTSERVER_", "DJANGO_")) and k not in ("SECRET_KEY",
                                                                                        "DATABASE_URL")}
    environment.update(DJANGO_SETTINGS_MODULE="server.settings", AGENTSERVER_DATA_DIR=str(data_dir), **env)
    return subprocess.run([sys.executable, "-c", "import django; django.setup(); " + code], check=False,
                          cwd=ROOT,
                          env=environment, capture_output=True, text=True, timeout=120)


def test_a_scaled_worker_refuses_to_start_without_a_secret_key(tmp_path):
    # Refused while reading the settings: no database is reached, so any PostgreSQL address shows it.
    result = python(PRINT_KEY, data_dir=tmp_path, DATABASE_URL="postgres://nobody@127.0.0.1:1/absent")
    assert result.returncode != 0
    assert "SECRET_KEY must be set in the environment when DATABASE_URL is PostgreSQL" in result.stderr
    assert not (tmp_path / "secret_key").exists()


def test_a_scaled_worker_serves_with_the_key_from_the_environment(tmp_path):
    result = python(PRINT_KEY, data_dir=tmp_path, DATABASE_URL="postgres://nobody@127.0.0.1:1/absent",
                    SECRET_KEY="the-deployment-key")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "the-deployment-key"
    assert not (tmp_path / "secret_key").exists()


def test_the_embedded_default_makes_its_key_once_in_the_data_dir(tmp_path):
    first = python(PRINT_KEY, data_dir=tmp_path)
    second = python(PRINT_KEY, data_dir=tmp_path)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert first.stdout.strip() == second.stdout.strip() == (tmp_path / "secret_key").read_text().strip()
    assert len(first.stdout.strip()) >= 50


def test_a_credential_sealed_on_one_host_opens_on_another(tmp_path):
    """Two hosts with their own data dirs and the deployment's SECRET_KEY derive one credential key."""
    scaled = {"DATABASE_URL": "postgres://nobody@127.0.0.1:1/absent", "SECRET_KEY": "the-deployment-key"}
    sealed = python("from auth_app.crypto import encrypt_json; print(encrypt_json({'key': 'sk-shared'}))",
                    data_dir=tmp_path / "host-a", **scaled)
    assert sealed.returncode == 0, sealed.stderr
    opened = python(f"from auth_app.crypto import decrypt_json; print(decrypt_json({sealed.stdout.strip()!r}))",
                    data_dir=tmp_path / "host-b", **scaled)
    assert opened.returncode == 0, opened.stderr
    assert opened.stdout.strip() == "{'key': 'sk-shared'}"
    other = python(f"from auth_app.crypto import decrypt_json; decrypt_json({sealed.stdout.strip()!r})",
                   data_dir=tmp_path / "host-c", DATABASE_URL=scaled["DATABASE_URL"], SECRET_KEY="another-key")
    assert other.returncode != 0 and "CredentialDecryptError" in other.stderr
