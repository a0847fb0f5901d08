#!/bin/sh
# get-seff.sh: install SchedMD's seff (contribs/seff/seff) of the Slurm
# release installed here as /usr/local/bin/seff, for t/t4110-eff-vs-seff.t,
# which compares `slurm-pin eff` with it line by line.
#
# Debian packages Slurm's Perl API (libslurm-perl, libslurmdb-perl, which
# contrib/install-deps.sh installs) but not the seff script, so it is taken
# from the Debian source package of the installed slurm-wlm, at exactly the
# installed version, from the same Debian archive apt uses (a deb-src list
# of our own in a scratch directory: the system's apt configuration is left
# as it is).  Debian's patches do not touch contribs/seff.
# Idempotent: does nothing when /usr/local/bin/seff is already the
# installed version's (the version is kept in /usr/local/share/slurm-pin-test/seff.version).
# Needs root.
set -eu

marker=/usr/local/share/slurm-pin-test/seff.version
version=$(dpkg-query -W -f '${source:Version}' slurm-client 2>/dev/null || true)
if [ -z "$version" ]; then
    echo "get-seff: slurm-client is not installed (contrib/install-deps.sh)" >&2
    exit 1
fi
if [ -x /usr/local/bin/seff ] && [ "$(cat "$marker" 2>/dev/null)" = "$version" ]; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "get-seff: need root to install /usr/local/bin/seff" >&2
    exit 1
fi

tmp=$(mktemp -d /tmp/get-seff.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lists/partial" "$tmp/parts"
# deb-src lines for every deb line apt has (one-line and deb822 formats)
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] && sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' "$f"
done >"$tmp/src.list"
for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    sed 's/^Types:.*/Types: deb-src/' "$f" >"$tmp/parts/$(basename "$f")"
done
apt_src () {
    apt-get -q -o Dir::Etc::SourceList="$tmp/src.list" \
        -o Dir::Etc::SourceParts="$tmp/parts" \
        -o Dir::State::Lists="$tmp/lists" \
        -o APT::Sandbox::User=root "$@"
}
apt_src update >"$tmp/update.log" 2>&1 || {
    cat "$tmp/update.log" >&2
    echo "get-seff: apt-get update of the deb-src lists failed" >&2
    exit 1
}
# only the upstream tarball is needed: a mirror without the .dsc or the
# Debian diff (seen on this project's CI mirror) is not an error here
(cd "$tmp" && apt_src source --download-only "slurm-wlm=$version") \
    >"$tmp/source.log" 2>&1 || true
orig=$(ls "$tmp"/slurm-wlm_*.orig.tar.* 2>/dev/null | head -n 1)
if [ -z "$orig" ]; then
    cat "$tmp/source.log" >&2
    echo "get-seff: no source of slurm-wlm $version in the archive" >&2
    exit 1
fi
tar -xf "$orig" -C "$tmp" --wildcards '*/contribs/seff/seff'
install -m 755 "$tmp"/*/contribs/seff/seff /usr/local/bin/seff
mkdir -p "$(dirname "$marker")"
echo "$version" >"$marker"
echo "get-seff: /usr/local/bin/seff from slurm-wlm $version" >&2
