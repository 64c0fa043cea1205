import CoreMetrics
import FerryCore
import FerryDaemon
import FerryPlanning
import Foundation
import Prometheus

/// `/metrics`: Prometheus text. The run history's figures are swift-metrics counters
/// (`RunMetrics`, added as each run ends) collected by swift-prometheus's registry; the
/// live state (queues left, paused, offline, files per status) is set as gauges when
/// scraped. One per process: swift-metrics is bootstrapped once.
public final class MetricsExporter: Sendable {
    private let registry: PrometheusCollectorRegistry

    /// Makes the registry and bootstraps swift-metrics with it.
    public static func bootstrap() -> MetricsExporter {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return MetricsExporter(registry: registry)
    }

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
    }

    private func gauge(_ name: String, _ help: String, _ labels: [(String, String)] = []) -> Prometheus.Gauge {
        registry.makeGauge(descriptor: MetricNameDescriptor(metricName: name, unitName: "", helpText: help), labels: labels)
    }

    func exposition(control: DaemonControl, api: ControlAPI) async -> String {
        let snapshot = await control.snapshot()
        let offline = Set(snapshot.offlineRemotes.map(\.remote))
        for folder in control.config.folders {
            let name = ("folder", folder.name)
            let live = snapshot.folders.first { $0.name == folder.name }
            gauge("ferry_folder_paused", "1 while the folder is paused through the API", [name])
                .set(to: control.isPaused(folder.name) ? 1 : 0)
            gauge("ferry_folder_running", "1 while a run of the folder is under way", [name])
                .set(to: live?.state == "running" ? 1 : 0)
            gauge("ferry_folder_offline", "1 while the folder's remote does not answer", [name])
                .set(to: live?.remote.map { offline.contains($0) ? 1.0 : 0.0 } ?? 0)
            gauge("ferry_folder_held", "1 while a run of the folder is held because it would change too much (alert on it)", [name])
                .set(to: live?.hold == nil ? 0 : 1)
            gauge("ferry_folder_unsettled_files", "files seen changing that have not settled", [name])
                .set(to: Double(live?.unsettledFiles ?? 0))
            let running = live?.state == "running" ? live?.queues ?? [] : []
            for queue in control.config.queues.map(\.name) {
                let progress = running.first { $0.queue == queue }
                let labels = [name, ("queue", queue)]
                gauge("ferry_run_files_left", "files the run under way has still to move", labels)
                    .set(to: Double(progress.map { max(0, $0.filesTotal - $0.filesDone - $0.filesFailed) } ?? 0))
                gauge("ferry_run_bytes_left", "bytes the run under way has still to move", labels)
                    .set(to: Double(progress.map { max(0, $0.bytesTotal - $0.bytesDone) } ?? 0))
            }
            if let (service, pair) = try? await control.recordedPair(folder),
               let totals = try? await service.totals(of: pair) {
                for status in FileStatus.allCases {
                    gauge("ferry_files", "files in the journal by status", [name, ("status", status.rawValue)])
                        .set(to: Double(totals[status].files))
                    gauge("ferry_bytes", "bytes in the journal by status", [name, ("status", status.rawValue)])
                        .set(to: Double(totals[status].bytes))
                }
            }
        }
        gauge("ferry_daemon_start_time_seconds", "when the daemon started, seconds since 1970")
            .set(to: snapshot.startedAt.timeIntervalSince1970)
        return registry.emitToString()
    }
}
