/// One transfer queue and the files that belong to it.
public struct QueueRule: Sendable, Equatable {
    public var name: String
    /// Globs on the path relative to the folder (see `GlobPattern`); any one matching is enough.
    public var match: [String]
    /// Size bounds in bytes, inclusive; a file outside them is not in this queue.
    public var minSize: Int64?
    public var maxSize: Int64?
    /// Most transfers of this queue's files of 1 MiB or more running at once; smaller files
    /// are bound only by the global cap (`transfers.max`), see `SchedulerState`.
    public var concurrency: Int
    /// How a two-way sync settles this queue's conflicts, unless the folder says otherwise.
    public var conflict: ConflictPolicy?

    public init(name: String, match: [String], minSize: Int64? = nil, maxSize: Int64? = nil, concurrency: Int,
                conflict: ConflictPolicy? = nil) {
        self.name = name
        self.match = match
        self.minSize = minSize
        self.maxSize = maxSize
        self.concurrency = concurrency
        self.conflict = conflict
    }

    /// The standard queues, highest priority first; config.yml spells out the same.
    public static let standard: [QueueRule] = [
        QueueRule(
            name: "thumbnails",
            match: ["**/.thumbnails/**", "**/thumbnails/**", "**/.thumbs/**", "*.thumb.*", "*_thumb.*", "*-thumb.*"],
            maxSize: 4 << 20, concurrency: 4),
        QueueRule(
            name: "media",
            match: [
                "*.{jpg,jpeg,png,heic,heif,webp,gif,tif,tiff,avif}",
                "*.{dng,cr2,cr3,nef,arw,raf,orf,rw2,srw,pef}",
                "*.{mp4,mov,m4v,mkv,avi,mts,m2ts,3gp,webm,insv,lrv}",
            ],
            concurrency: 2),
        QueueRule(name: "gpx", match: ["*.{gpx,kml,kmz,fit,tcx,nmea,xmp,srt}"], concurrency: 2),
        QueueRule(name: "archives", match: ArchiveContents.fileGlobs, concurrency: 1),
    ]
}
