import CFFmpeg
import XCTest

@testable import OrbDecode

/// `HEVCFields` reads a sequence parameter set to its VUI's `field_seq_flag` through every part that may come before
/// it (sub-layers, a conformance window, scaling lists, PCM, reference picture sets predicted from one another,
/// long-term pictures, a sample aspect ratio of its own, colour), and gives up, saying "not fields", on one cut short.
/// x265 writes none of those parts, so the sets here are made bit by bit.
final class HEVCFieldsTests: XCTestCase {
  /// Writes bits, most significant first; `nal` makes them an SPS NAL unit (trailing bits, emulation prevention).
  private struct Bits {
    var bits: [Bool] = []
    mutating func u(_ value: Int, _ count: Int) {
      for i in stride(from: count - 1, through: 0, by: -1) { bits.append((value >> i) & 1 == 1) }
    }
    mutating func flag(_ value: Bool) { bits.append(value) }
    mutating func ue(_ value: Int) {
      let coded = value + 1
      let length = Int.bitWidth - coded.leadingZeroBitCount
      u(0, length - 1)
      u(coded, length)
    }
    mutating func se(_ value: Int) { ue(value > 0 ? 2 * value - 1 : -2 * value) }

    func nal(cutAt cut: Int? = nil) -> [UInt8] {
      var all = bits
      all.append(true)
      while all.count % 8 != 0 { all.append(false) }
      var rbsp: [UInt8] = stride(from: 0, to: all.count, by: 8).map { at in
        all[at..<at + 8].reduce(0) { $0 << 1 | ($1 ? 1 : 0) }
      }
      if let cut { rbsp = Array(rbsp.prefix(cut)) }
      var out: [UInt8] = [33 << 1, 1]
      var zeros = 0
      for byte in rbsp {
        if zeros >= 2 && byte <= 3 {
          out.append(3)
          zeros = 0
        }
        out.append(byte)
        zeros = byte == 0 ? zeros + 1 : 0
      }
      return out
    }
  }

  /// An SPS with every optional part before the VUI's field flag, which is `fields`.
  private func sps(fields: Bool) -> Bits {
    var b = Bits()
    b.u(0, 4)  // sps_video_parameter_set_id
    b.u(1, 3)  // sps_max_sub_layers_minus1: two temporal layers
    b.flag(true)  // sps_temporal_id_nesting_flag
    b.u(0x01, 8)  // general profile space, tier, idc (Main)
    b.u(0x6000_0000, 32)  // compatibility flags
    b.u(0b0100, 4)  // progressive 0, interlaced 1, non-packed 0, frame-only 0
    b.u(0, 43)
    b.u(0, 1)
    b.u(93, 8)  // general_level_idc
    b.flag(true)  // sub_layer_profile_present_flag[0]
    b.flag(true)  // sub_layer_level_present_flag[0]
    b.u(0, 2 * 7)  // reserved_zero_2bits for the layers up to 8
    b.u(0x1234, 16)
    b.u(0xFFFF_FFFF, 32)
    b.u(0xABCDEF, 24)
    b.u(0x55, 16)  // the sub-layer's 88 profile bits
    b.u(90, 8)  // its level
    b.ue(0)  // sps_seq_parameter_set_id
    b.ue(1)  // chroma_format_idc 4:2:0
    b.ue(1920)
    b.ue(544)
    b.flag(true)  // conformance_window_flag
    for offset in [0, 0, 0, 2] { b.ue(offset) }
    b.ue(0)
    b.ue(0)  // bit depths
    b.ue(4)  // log2_max_pic_order_cnt_lsb_minus4: 8-bit POC LSBs
    b.flag(true)  // sub-layer ordering info for each layer
    for _ in 0..<2 { for value in [4, 2, 0] { b.ue(value) } }
    for value in [0, 3, 0, 3, 2, 2] { b.ue(value) }  // block sizes and transform depths
    b.flag(true)  // scaling_list_enabled_flag
    b.flag(true)  // sps_scaling_list_data_present_flag
    for size in 0..<4 {
      for matrix in stride(from: 0, to: 6, by: size == 3 ? 3 : 1) {
        let coded = (size + matrix) % 2 == 0
        b.flag(coded)
        if !coded {
          b.ue(matrix == 0 ? 0 : 1)  // scaling_list_pred_matrix_id_delta
          continue
        }
        if size > 1 { b.se(8) }  // scaling_list_dc_coef_minus8
        for i in 0..<min(64, 1 << (4 + (size << 1))) { b.se(i % 3 - 1) }
      }
    }
    b.flag(false)  // amp_enabled_flag
    b.flag(true)  // sample_adaptive_offset_enabled_flag
    b.flag(true)  // pcm_enabled_flag
    b.u(7, 4)
    b.u(7, 4)  // PCM bit depths
    b.ue(0)
    b.ue(1)  // PCM block sizes
    b.flag(false)  // pcm_loop_filter_disabled_flag
    b.ue(3)  // num_short_term_ref_pic_sets
    // Set 0: two pictures before, one after.
    b.ue(2)
    b.ue(1)
    for (delta, used) in [(0, true), (1, false), (0, true)] {
      b.ue(delta)
      b.flag(used)
    }
    // Set 1, predicted from set 0 (3 pictures, so 4 entries): two used, one kept unused, one dropped: 3 pictures.
    b.flag(true)  // inter_ref_pic_set_prediction_flag
    b.flag(false)  // delta_rps_sign
    b.ue(0)  // abs_delta_rps_minus1
    for (used, kept) in [(true, true), (false, true), (false, false), (true, true)] {
      b.flag(used)
      if !used { b.flag(kept) }  // use_delta_flag
    }
    // Set 2, predicted from set 1 (3 pictures, so 4 entries).
    b.flag(true)
    b.flag(true)
    b.ue(1)
    for used in [true, false, true, true] {
      b.flag(used)
      if !used { b.flag(true) }
    }
    b.flag(true)  // long_term_ref_pics_present_flag
    b.ue(2)
    for poc in [5, 9] {
      b.u(poc, 8)  // lt_ref_pic_poc_lsb_sps: the POC LSBs' 8 bits
      b.flag(true)
    }
    b.flag(true)  // sps_temporal_mvp_enabled_flag
    b.flag(true)  // strong_intra_smoothing_enabled_flag
    b.flag(true)  // vui_parameters_present_flag
    b.flag(true)  // aspect_ratio_info_present_flag
    b.u(255, 8)  // EXTENDED_SAR
    b.u(16, 16)
    b.u(11, 16)
    b.flag(true)  // overscan_info_present_flag
    b.flag(false)
    b.flag(true)  // video_signal_type_present_flag
    b.u(5, 3)
    b.flag(false)
    b.flag(true)  // colour_description_present_flag
    b.u(1, 8)
    b.u(1, 8)
    b.u(1, 8)
    b.flag(true)  // chroma_loc_info_present_flag
    b.ue(1)
    b.ue(1)
    b.flag(false)  // neutral_chroma_indication_flag
    b.flag(fields)  // field_seq_flag
    b.flag(true)  // frame_field_info_present_flag
    b.flag(false)  // default_display_window_flag
    return b
  }

  func testTheFieldFlagIsReadThroughEveryPartBeforeIt() {
    XCTAssertTrue(HEVCFields.fieldSequence(in: [ArraySlice(sps(fields: true).nal())]))
    XCTAssertFalse(HEVCFields.fieldSequence(in: [ArraySlice(sps(fields: false).nal())]))
  }

  func testAnSPSCutShortOrMissingIsNotFields() {
    let whole = sps(fields: true)
    let bytes = (whole.bits.count - 3) / 8  // ends before the field flag
    XCTAssertFalse(HEVCFields.fieldSequence(in: [ArraySlice(whole.nal(cutAt: bytes))]))
    XCTAssertFalse(HEVCFields.fieldSequence(in: []))
  }

  func testTheFieldOrderFromTheFirstTimingMessage() {
    // A prefix SEI unit (type 39) holding one pic_timing message (type 1) of one byte: pic_struct in its high bits.
    func sei(_ picStruct: UInt8) -> [ArraySlice<UInt8>] { [ArraySlice([39 << 1, 1, 1, 1, picStruct << 4, 0x80])] }
    for (picStruct, top) in [(1, true), (2, false), (9, false), (10, true), (11, true), (12, false)] {
      XCTAssertEqual(HEVCFields.topFieldFirst(in: sei(UInt8(picStruct))), top, "pic_struct \(picStruct)")
    }
    XCTAssertNil(HEVCFields.topFieldFirst(in: sei(0)), "a frame says nothing of fields")
  }

  func testOnlyAPictureTwiceAsWideAsItIsHighIsAField() {
    let square = AVRational(num: 1, den: 1)
    XCTAssertTrue(HEVCFields.areFields(width: 1920, height: 540, sar: square))
    XCTAssertTrue(HEVCFields.areFields(width: 544, height: 288, sar: AVRational(num: 16, den: 11)), "wide samples")
    XCTAssertFalse(HEVCFields.areFields(width: 720, height: 576, sar: AVRational(num: 16, den: 15)), "a whole frame")
    XCTAssertFalse(HEVCFields.areFields(width: 1440, height: 1080, sar: AVRational(num: 4, den: 3)))
  }
}
