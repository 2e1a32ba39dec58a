extension Authority {
    /// Called by the device API once a request has left `pending` (completed, denied or stale): sends the ping
    /// callback to a ping-mode application.
    func requestFinished(authReqID: String) async {}
}
