#!/usr/bin/python3
"""What a CI system reads of a JUnit XML file, through junitparser (Debian's
python3-junitparser): a line per suite with its counts, then a line per test
case, tab-separated: name, result (passed, failure, error, skipped), type,
message. Exit 1 with the parser's error when it cannot read the file."""
import sys

import junitparser


def main(path):
    try:
        xml = junitparser.JUnitXml.fromfile(path)
    except Exception as error:  # the parser's own words are the point
        print(f"unreadable: {error}", file=sys.stderr)
        return 1
    suites = [xml] if isinstance(xml, junitparser.TestSuite) else list(xml)
    for suite in suites:
        print(f"suite\t{suite.name}\t{suite.tests}\t{suite.failures}\t{suite.errors}\t{suite.skipped}")
        for case in suite:
            results = case.result or []
            if not results:
                print(f"case\t{case.name}\tpassed\t\t")
            for result in results:
                kind = type(result).__name__.lower()
                print(f"case\t{case.name}\t{kind}\t{result.type or ''}\t{result.message or ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
