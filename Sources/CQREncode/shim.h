#ifndef FS_QRENCODE_SHIM_H
#define FS_QRENCODE_SHIM_H
// libqrencode (Debian libqrencode-dev) for the authority's QR codes of sign-in and enrolment links.
// Only FaceSealAuthority's QRCode.swift imports it.
#include <qrencode.h>
#endif
