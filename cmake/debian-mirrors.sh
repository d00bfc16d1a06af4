# debian-mirrors.sh: the Debian mirrors this machine's apt is set up to use,
# for the scripts that fetch from other Debian releases through apt
# configurations of their own (cmake/fetch-debian-package.sh,
# scripts/debian-root.sh).  Sourced; defines one function:
#
#   debian_mirror main|security
#       prints the URI of the Debian archive (main) or of Debian's security
#       archive (security) and returns 0; else says on stderr what to set
#       and returns 1.
#
# Where the URI comes from, first found:
#   1. $DEBIAN_MIRROR (main) or $DEBIAN_SECURITY_MIRROR (security): an
#      operator's choice, checked to be one URI (scheme://..., no spaces,
#      quotes or brackets);
#   2. the machine's apt sources, as apt reads them: the deb822 files
#      /etc/apt/sources.list.d/*.sources, then the one-line files
#      /etc/apt/sources.list and /etc/apt/sources.list.d/*.list.  An entry
#      counts when it is enabled, of type deb or deb-src, has the main
#      component, an http, https, ftp or file URI, and a Debian suite:
#      main: a release name or alias (bookworm, trixie, stable, sid, ...,
#      and their -updates and -backports); security: such a name with
#      -security.  So a proxy or a local cache an operator set up as the
#      machine's mirror is what the fetches use, and a third-party
#      repository in the sources (its own suite names) is never taken for
#      Debian's.
# Both archives are checked against Debian's archive keyring by apt and
# debootstrap, whichever mirror serves them.
#
# An example: a Debian 12 machine whose debian.sources says
#   URIs: http://ftp.example.org/debian  Suites: bookworm bookworm-updates
#   URIs: http://ftp.example.org/debian-security  Suites: bookworm-security
# gives main = http://ftp.example.org/debian and security =
# http://ftp.example.org/debian-security.

# Where apt's sources are (a test points these elsewhere).
: "${DEBIAN_MIRRORS_SOURCES_LIST:=/etc/apt/sources.list}"
: "${DEBIAN_MIRRORS_SOURCES_PARTS:=/etc/apt/sources.list.d}"

# _debian_sources: one "URI SUITE" line per suite of every usable entry, in
# apt's order of files.
_debian_sources() {
    local f
    for f in "$DEBIAN_MIRRORS_SOURCES_PARTS"/*.sources; do
        [ -f "$f" ] || continue
        # deb822: paragraphs of "Field: value" lines, '#' comments,
        # continuation lines starting with a space.
        awk '
            function flush() {
                if (uris != "" && suites != "" && types ~ /(^| )deb(-src)?( |$)/ &&
                    comps ~ /(^| )main( |$)/ && tolower(enabled) != "no") {
                    n = split(uris, u, " "); m = split(suites, s, " ")
                    for (i = 1; i <= n; i++) for (j = 1; j <= m; j++) print u[i], s[j]
                }
                uris = suites = types = comps = enabled = ""; field = ""
            }
            /^#/ { next }
            /^[ \t]*$/ { flush(); next }
            /^[ \t]/ { if (field == "uris") uris = uris " " $0; else if (field == "suites") suites = suites " " $0; next }
            {
                field = tolower(substr($0, 1, index($0, ":") - 1)); v = substr($0, index($0, ":") + 1)
                if (field == "uris") uris = v; else if (field == "suites") suites = v
                else if (field == "types") types = v; else if (field == "components") comps = v
                else if (field == "enabled") enabled = v
                gsub(/^[ \t]+|[ \t]+$/, "", enabled)
            }
            END { flush() }' "$f"
    done
    for f in "$DEBIAN_MIRRORS_SOURCES_LIST" "$DEBIAN_MIRRORS_SOURCES_PARTS"/*.list; do
        [ -f "$f" ] || continue
        # One-line: "deb [options] URI SUITE COMPONENT...".
        awk '
            /^[ \t]*(deb|deb-src)[ \t]/ {
                sub(/#.*/, ""); i = 2
                if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
                uri = $(i); suite = $(i + 1); main = 0
                for (k = i + 2; k <= NF; k++) if ($k == "main") main = 1
                if (uri != "" && suite != "" && main) print uri, suite
            }' "$f"
    done
}

debian_mirror() {
    local which=$1 var uri suite release
    release='(bookworm|trixie|forky|duke|sid|bullseye|buster|oldoldstable|oldstable|stable|testing|unstable)'
    case "$which" in
        main) var=DEBIAN_MIRROR ;;
        security) var=DEBIAN_SECURITY_MIRROR ;;
        *) echo "debian_mirror: main or security, not '$which'" >&2; return 2 ;;
    esac
    if [ -n "${!var:-}" ]; then
        local value=${!var} bad=no
        case "$value" in *[[:space:]\"\'\`\$\;\&\|\<\>\(\)\[\]\{\}\\]*) bad=yes ;; esac
        [[ $value =~ ^[A-Za-z][A-Za-z0-9+.-]*://. ]] || bad=yes
        if [ "$bad" = yes ]; then
            echo "debian-mirrors.sh: \$$var is not one URI (scheme://host/path): '$value'" >&2
            return 1
        fi
        printf '%s\n' "${value%/}"
        return 0
    fi
    while read -r uri suite; do
        [[ $uri =~ ^(https?|ftp|file):// ]] || continue
        if [ "$which" = security ]; then
            [[ $suite =~ ^${release}-security$ ]] || continue
        else
            [[ $suite =~ ^${release}(-updates|-backports)?$ ]] || continue
        fi
        printf '%s\n' "${uri%/}"
        return 0
    done < <(_debian_sources 2>/dev/null)
    echo "debian-mirrors.sh: no Debian $([ "$which" = security ] && echo "security ")archive in this" \
        "machine's apt sources ($DEBIAN_MIRRORS_SOURCES_PARTS/*.sources, $DEBIAN_MIRRORS_SOURCES_LIST," \
        "$DEBIAN_MIRRORS_SOURCES_PARTS/*.list: an enabled deb entry with an http, https, ftp or file" \
        "URI, the main component and a Debian suite$([ "$which" = security ] && echo " ending in -security"))." \
        "Set $var to the mirror to use (e.g. the URI of a local Debian mirror or proxy)." >&2
    return 1
}
