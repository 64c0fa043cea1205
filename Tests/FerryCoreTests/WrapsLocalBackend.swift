import FerryTestSupport
import LocalBackend

/// A test backend that wraps a real LocalBackend (`WrapsBackend` is in FerryTestSupport).
protocol WrapsLocalBackend: WrapsBackend where Inner == LocalBackend {}
