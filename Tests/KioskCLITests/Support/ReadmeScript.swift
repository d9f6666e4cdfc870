import Foundation

/// The README's runnable blocks turned into one bash script that types them, in order, into a fresh directory, as
/// a newcomer copying them would.
///
/// What runs: every block fenced as `sh` (in one shell, so `export` and `alias` carry over) and every block fenced as
/// `python` (with the Python of `KIOSK_TEST_PYTHON`). Other blocks (`text`, `swift`, `json`, `ini`, `nginx`) are only
/// shown. A block right after the line `<!-- readme-test: skip -->` is not run (say why in the README beside it).
///
/// What the script changes, and only this:
/// - a line that starts a server (`swift run kiosk serve`, `kiosk serve`, `kiosk merchant serve`) runs in the
///   background, its log in the directory, and the script waits until the server answers `/health` (over HTTPS,
///   trusting `KIOSK_TLS_ROOT`, when the line passes `--tls-certificate`); starting a server that runs already stops
///   it first, as the reader's Ctrl-C does;
/// - `swift build …` and `swift test` lines are passed over (the test runs the build under test, and is itself that
///   `swift test`); `swift run NAME` runs the built `NAME`, and `$PWD/.build/debug` is the build's folder;
/// - ports 8080 and 8090 are the store's and the merchant's free ports (`KIOSK_PORT`, `KIOSK_SERVER`,
///   `KIOSK_MERCHANT_PORT` name them for commands' defaults; `explain` and `reconcile` find the merchant from the
///   `publicURL` `merchant init` keeps), `/tmp/` is a folder inside the directory, `Examples/` is the checkout's,
///   and `kiosk_…` is the admin token the store printed.
struct ReadmeScript {
    /// A fenced block of the README.
    struct Block: Equatable {
        var language: String
        var text: String
        /// The README line of the block's first line of content.
        var line: Int
        /// The README section (`## …`) the block is in.
        var section: String
    }

    /// The marker that keeps the next block from running.
    static let skipMarker = "<!-- readme-test: skip -->"

    /// The blocks that run, in README order.
    static func runnableBlocks(in readme: String) -> [Block] {
        var blocks: [Block] = []
        var section = ""
        var open: Block?
        var skipNext = false
        for (index, line) in readme.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if var block = open {
                if line.hasPrefix("```") {
                    if ["sh", "python"].contains(block.language) && !skipNext { blocks.append(block) }
                    skipNext = false
                    open = nil
                } else {
                    block.text += line + "\n"
                    open = block
                }
            } else if line.hasPrefix("```") {
                open = Block(
                    language: String(line.dropFirst(3)).trimmingCharacters(in: .whitespaces), text: "",
                    line: index + 2, section: section)
            } else if line.hasPrefix("## ") {
                section = String(line.dropFirst(3))
            } else if line.trimmingCharacters(in: .whitespaces) == skipMarker {
                skipNext = true
            }
        }
        return blocks
    }

    /// Where the script finds what it needs.
    struct Setting {
        /// The folder of the built executables (`kiosk`, `coin-shop`).
        var binaries: URL
        /// The checkout (for `Examples/`).
        var checkout: URL
        /// The Python to run `python` blocks with; nil skips them (said in the output).
        var python: String?
        /// The ports the store and the merchant listen on, for the README's 8080 and 8090.
        var storePort: Int
        var merchantPort: Int
    }

    /// The whole script; `README-SECTION <name> <seconds since 1970>` lines mark where each section begins.
    static func script(for blocks: [Block], setting: Setting) -> String {
        var script = """
            set -euo pipefail
            shopt -s expand_aliases
            README_DIR="$PWD"
            README_BIN=\(quoted(setting.binaries.path))
            README_CHECKOUT=\(quoted(setting.checkout.path))
            README_PYTHON=\(quoted(setting.python ?? ""))
            README_ADMIN_TOKEN=""
            export KIOSK_PORT=\(setting.storePort) KIOSK_SERVER=http://127.0.0.1:\(setting.storePort)
            export KIOSK_MERCHANT_PORT=\(setting.merchantPort)
            mkdir -p "$README_DIR/tmp" "$README_DIR/logs"
            trap 'status=$?; jobs -p | xargs -r kill 2>/dev/null; wait 2>/dev/null; exit $status' EXIT
            trap 'exit 143' TERM INT
            trap 'echo "README command failed (status $?): $BASH_COMMAND" >&2' ERR
            readme_wait() {  # name, health URL, log, pid: waits until the server answers, at most 120 s
                for _ in $(seq 1200); do
                    if curl -fsS ${KIOSK_TLS_ROOT:+--cacert "$KIOSK_TLS_ROOT"} -o /dev/null "$2" 2>/dev/null; then
                        return 0
                    fi
                    if ! kill -0 "$4" 2>/dev/null; then break; fi
                    sleep 0.1
                done
                echo "$1 did not answer $2; its log:" >&2; tail -n 40 "$3" >&2; return 1
            }

            """
        var section = ""
        for block in blocks {
            if block.section != section {
                section = block.section
                script += "echo \"README-SECTION \(section.replacingOccurrences(of: "\"", with: "")) $(date +%s.%N)\"\n"
            }
            script += "echo \"== README.md:\(block.line) (\(block.language))\"\n"
            switch block.language {
            case "python":
                if setting.python != nil {
                    script += "\"$README_PYTHON\" - <<'README_PYTHON_BLOCK'\n"
                    script += substituted(block.text, setting) + "README_PYTHON_BLOCK\n"
                } else {
                    script += "echo 'skipped: no Python (set KIOSK_TEST_PYTHON to run the Python example)'\n"
                }
            default:
                script += logicalLines(of: block.text).map { shellLine($0, setting) }.joined()
            }
        }
        return script
    }

    /// The block's lines with backslash continuations joined to the line they continue.
    static func logicalLines(of text: String) -> [String] {
        var lines: [String] = []
        var pending = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            pending += line
            if line.hasSuffix("\\") {
                pending += "\n"
            } else {
                lines.append(pending)
                pending = ""
            }
        }
        return lines
    }

    /// One logical line as the script runs it.
    static func shellLine(_ line: String, _ setting: Setting) -> String {
        let command = withoutComment(line).trimmingCharacters(in: .whitespaces)
        if command.hasPrefix("swift build") || command == "swift test" {
            return "# passed over: \(command)\n"
        }
        for (prefix, name) in [
            ("swift run kiosk serve", "store"), ("kiosk serve", "store"), ("kiosk merchant serve", "merchant"),
        ] where command.hasPrefix(prefix) {
            let scheme = command.contains("--tls-certificate") ? "https" : "http"
            let port = name == "store" ? "$KIOSK_PORT" : "$KIOSK_MERCHANT_PORT"
            let health = "\(scheme)://127.0.0.1:\(port)/health"
            let log = "\"$README_DIR/logs/\(name).log\""
            var script =
                "if [ -n \"${README_PID_\(name):-}\" ]; then kill $README_PID_\(name); wait $README_PID_\(name) || true; fi\n"
            script += "\(substituted(command, setting)) >> \(log) 2>&1 &\n"
            script += "README_PID_\(name)=$!\n"
            script += "readme_wait \(name) \(health) \(log) $README_PID_\(name)\n"
            if name == "store" {
                // The token is printed at the first start only; a restart keeps the one the reader exported.
                script +=
                    "README_ADMIN_TOKEN=${README_ADMIN_TOKEN:-$(grep -o 'kiosk_[A-Za-z0-9_-]*' \(log) | head -n 1)}\n"
            }
            return script
        }
        return substituted(line, setting) + "\n"
    }

    /// `line` up to a `#` that starts a comment (one after a space, outside quotes).
    static func withoutComment(_ line: String) -> String {
        var quote: Character?
        var previous: Character = " "
        for index in line.indices {
            let character = line[index]
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "\"" || character == "'" {
                quote = character
            } else if character == "#" && previous.isWhitespace {
                return String(line[..<index])
            }
            previous = character
        }
        return line
    }

    /// The README's text with the test's ports, folders and token.
    static func substituted(_ text: String, _ setting: Setting) -> String {
        var text = text
        let replacements = [
            ("swift run kiosk ", "\"$README_BIN/kiosk\" "), ("swift run coin-shop ", "\"$README_BIN/coin-shop\" "),
            ("$PWD/.build/debug", "$README_BIN"), ("kiosk_…", "$README_ADMIN_TOKEN"),
            ("127.0.0.1:8080", "127.0.0.1:\(setting.storePort)"), ("localhost:8080", "localhost:\(setting.storePort)"),
            ("127.0.0.1:8090", "127.0.0.1:\(setting.merchantPort)"),
            ("localhost:8090", "localhost:\(setting.merchantPort)"), ("/tmp/", "$README_DIR/tmp/"),
            (" Examples/", " $README_CHECKOUT/Examples/"),
        ]
        for (from, to) in replacements { text = text.replacingOccurrences(of: from, with: to) }
        return text
    }

    /// `text` as one single-quoted shell word.
    static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
