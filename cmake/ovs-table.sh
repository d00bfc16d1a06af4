# Sourced by scripts: reads cmake/ovs-flavours.txt and cmake/ovs-sources.txt.
#
#   ovs_flavour NAME FIELD    prints FIELD (host, hash, isa, cflags) of NAME;
#                             fails with a message naming the known flavours
#   ovs_source RELEASE FIELD  prints FIELD (version, source, sha256, origin)
#                             of an OVS release line (3.1, 3.5, 4.0); fails with a
#                             message naming the known ones
#   ovs_release_names         the release lines, the default first
#   ovs_source_unpack RELEASE DEST
#                             puts RELEASE's pinned source tree at DEST (a
#                             new directory), checking its sha256
#   ovs_cross_prefix HOST     "" when HOST is this machine's own triplet,
#                             otherwise "HOST-" (the cross tools' prefix)
ovs_table_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

ovs_table_field() {  # FILE KEY COLUMN
    awk -F'|' -v key="$2" -v col="$3" '
        /^[[:space:]]*(#|$)/ { next }
        { for (i = 1; i <= NF; i++) gsub(/^[[:space:]]+|[[:space:]]+$/, "", $i) }
        $1 == key { print $col; found = 1; exit }
        END { exit !found }' "$1"
}

ovs_flavour() {
    local col
    case "$2" in
        host) col=2 ;; hash) col=3 ;; isa) col=4 ;; cflags) col=5 ;;
        *) echo "ovs_flavour: unknown field '$2'" >&2; return 2 ;;
    esac
    ovs_table_field "$ovs_table_dir/ovs-flavours.txt" "$1" "$col" || {
        echo "unknown OVS flavour '$1' (known: $(ovs_flavour_names | tr '\n' ' '))" >&2
        return 1
    }
}

ovs_flavour_names() {
    awk -F'|' '/^[[:space:]]*(#|$)/ { next } { gsub(/[[:space:]]/, "", $1); print $1 }' \
        "$ovs_table_dir/ovs-flavours.txt"
}

ovs_source() {
    local col
    case "$2" in
        version) col=2 ;; source) col=3 ;; sha256) col=4 ;; origin) col=5 ;;
        *) echo "ovs_source: unknown field '$2'" >&2; return 2 ;;
    esac
    ovs_table_field "$ovs_table_dir/ovs-sources.txt" "$1" "$col" || {
        echo "unknown OVS release '$1' (known: $(ovs_release_names | tr '\n' ' '))" >&2
        return 1
    }
}

ovs_release_names() {
    awk -F'|' '/^[[:space:]]*(#|$)/ { next } { gsub(/[[:space:]]/, "", $1); print $1 }' \
        "$ovs_table_dir/ovs-sources.txt"
}

ovs_source_unpack() {  # RELEASE DEST
    local release=$1 dest=$2 source sha256 origin actual tmp
    source=$(ovs_source "$release" source) || return 1
    sha256=$(ovs_source "$release" sha256)
    origin=$(ovs_source "$release" origin)
    tmp=$(mktemp -d "$(dirname "$dest")/.unpack-XXXXXX")
    case "$source" in
        tarball:*)
            local tarball=${OVS_TARBALL:-${source#tarball:}}
            if [ ! -r "$tarball" ]; then
                echo "$tarball not found: install Debian's openvswitch-source ($origin)" >&2
                rm -rf "$tmp"; return 1
            fi
            actual=$(sha256sum "$tarball" | cut -d' ' -f1)
            if [ "$actual" != "$sha256" ]; then
                echo "$tarball has sha256 $actual, expected $sha256 ($origin)" >&2
                rm -rf "$tmp"; return 1
            fi
            tar -xzf "$tarball" -C "$tmp" && mv "$tmp/openvswitch" "$dest" || { rm -rf "$tmp"; return 1; }
            ;;
        debian:*:*)
            local rest=${source#debian:} root
            root=$("$ovs_table_dir/fetch-debian-package.sh" "${rest%%:*}" binary "${rest#*:}" \
                "$sha256" | tail -1) || { rm -rf "$tmp"; return 1; }
            cp -a "$root/usr/src/openvswitch" "$tmp/openvswitch" && mv "$tmp/openvswitch" "$dest" ||
                { rm -rf "$tmp"; return 1; }
            ;;
        *) echo "ovs-sources.txt: bad source '$source' for $release" >&2; rm -rf "$tmp"; return 1 ;;
    esac
    rmdir "$tmp"
}

ovs_cross_prefix() {
    if [ "$1" = "$(gcc -dumpmachine)" ]; then
        echo ""
    else
        echo "$1-"
    fi
}
