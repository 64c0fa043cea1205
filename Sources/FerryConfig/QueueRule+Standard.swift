import FerryPlanning

// The standard queues are config.yml's defaults, and one of them is named by the archive
// bundles' file types (`ArchiveContents`): kept apart from `QueueRule`, which the queue
// classifier and the planner use (in FerryPlanning) and which needs neither.
extension QueueRule {
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
