// What every dialect shares (ATT MTU, service UUIDs, the standard services' codecs, the codec
// error) lives in TSGATT; protocol v1's users see it through this module as before.
@_exported import TSGATT
