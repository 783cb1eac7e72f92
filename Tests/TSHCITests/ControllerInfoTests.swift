import Testing
import TSHCI
import TSModels

@Suite struct ControllerInfoTests {
    @Test func hciVersionsHaveTheirCoreSpecificationNames() {
        #expect(ControllerInfo.versionName(6) == "4.0")
        #expect(ControllerInfo.versionName(9) == "5.0")
        #expect(ControllerInfo.versionName(11) == "5.2")
        #expect(ControllerInfo.versionName(200) == "unknown (200)")
    }

    @Test func leFeatureBitsAreNamed() {
        let mask: UInt64 = 1 << 5 | 1 << 8 | 1 << 11 | 1 << 12 | 1 << 40
        #expect(ControllerInfo.leFeatureNames(mask) == ["Data Length Extension", "2M PHY", "Coded PHY", "Extended Advertising", "bit 40"])
    }

    @Test func adapterNamesAreHciN() throws {
        #expect(try adapterIndex("hci0") == 0)
        #expect(try adapterIndex("hci12") == 12)
        #expect(throws: HCIError.invalidAdapterName("wlan0")) { try adapterIndex("wlan0") }
        #expect(throws: HCIError.invalidAdapterName("hci")) { try adapterIndex("hci") }
    }

    @Test func privilegeErrorsArePermissionErrors() {
        #expect(HCIError.permission("x").category == .permission)
        #expect(HCIError.noAdapter("x").category == .unavailable)
        #expect(HCIError.invalidAdapterName("x").category == .invalidInput)
    }
}
