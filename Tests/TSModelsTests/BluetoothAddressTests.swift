import Testing
import TSModels

@Suite("Bluetooth addresses")
struct BluetoothAddressTests {
    @Test("six colon-separated hex bytes in any case parse, and print upper case",
          arguments: [("AA:BB:CC:DD:EE:FF", "AA:BB:CC:DD:EE:FF"), ("aa:bb:cc:0d:ee:f0", "AA:BB:CC:0D:EE:F0")])
    func valid(text: String, printed: String) throws {
        let address = try #require(BluetoothAddress(text))
        #expect(address.description == printed)
    }

    @Test("anything else is not an address",
          arguments: ["AA:BB:CC:DD:EE", "AA:BB:CC:DD:EE:GG", "AA:BB:CC:DD:EE:FF:00", "AA-BB-CC-DD-EE-FF", "A:BB:CC:DD:EE:FFF", "+A:BB:CC:DD:EE:FF", "", "bedroom"])
    func invalid(text: String) {
        #expect(BluetoothAddress(text) == nil)
    }

    @Test("the bytes are kept least significant first, as HCI carries them")
    func byteOrder() throws {
        let address = try #require(BluetoothAddress("C0:FF:EE:00:00:01"))
        #expect(address.littleEndian == [0x01, 0x00, 0x00, 0xEE, 0xFF, 0xC0])
        #expect(BluetoothAddress(littleEndian: address.littleEndian) == address)
        #expect(BluetoothAddress(littleEndian: [1, 2, 3]) == nil)
    }
}
