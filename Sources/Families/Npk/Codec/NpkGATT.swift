import TSModels

extension GATTProfile {
    /// NPK's service: frames written without response to FF02, notified on FF03.
    public static let npk = GATTProfile(service: "000001FF-3C17-D293-8E48-14FE2E4DA212",
                                        writeCharacteristic: "0000FF02-0000-1000-8000-00805F9B34FB",
                                        notifyCharacteristic: "0000FF03-0000-1000-8000-00805F9B34FB", writeMode: .withoutResponse)
}
