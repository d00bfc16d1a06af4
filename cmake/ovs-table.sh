# Sourced by scripts: reads cmake/ovs-flavours.txt and cmake/ovs-sources.txt.
#
#   ovs_flavour NAME FIELD    prints FIELD (host, hash, isa, cflags) of NAME;
#                             fails with a message naming the known flavours
#   ovs_source FIELD          prints FIELD (version, tarball, sha256, origin)
#                             of the OVS source
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
    case "$1" in
        version) col=1 ;; tarball) col=2 ;; sha256) col=3 ;; origin) col=4 ;;
        *) echo "ovs_source: unknown field '$1'" >&2; return 2 ;;
    esac
    awk -F'|' -v col="$col" '
        /^[[:space:]]*(#|$)/ { next }
        { gsub(/^[[:space:]]+|[[:space:]]+$/, "", $col); print $col; exit }' \
        "$ovs_table_dir/ovs-sources.txt"
}

ovs_cross_prefix() {
    if [ "$1" = "$(gcc -dumpmachine)" ]; then
        echo ""
    else
        echo "$1-"
    fi
}
