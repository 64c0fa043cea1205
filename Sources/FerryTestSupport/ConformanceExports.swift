// The conformance suite and its sample data moved to FerryConformance so that the ferry
// executable can run them (`ferry plugin-test`); tests keep reaching them through
// FerryTestSupport, as before the move.
@_exported import FerryConformance
