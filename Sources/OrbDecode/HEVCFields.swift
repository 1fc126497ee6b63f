import CFFmpeg

/// HEVC coded in fields, as 1080i and 576i broadcasts and their recordings are: each coded picture is one field,
/// half the frame's height, 50 (or 60) a second, and the stream says so in its sequence parameter set (VUI
/// `field_seq_flag`), each picture's timing message saying which field it is (FFmpeg marks it interlaced, "top field
/// first" for a top field). FFmpeg's decoder hands out the fields as they are: pictures of half height, which a
/// player that shows them squashes the video to half its height (mpv does).
/// Thread-safety: pure functions over bytes.
enum HEVCFields {
  /// Whether the first sequence parameter set among `units` says its pictures are fields; false where it is missing
  /// or cannot be read to its VUI.
  static func fieldSequence(in units: [ArraySlice<UInt8>]) -> Bool {
    guard let sps = units.first(where: { $0.count > 2 && ($0[$0.startIndex] >> 1) & 0x3f == 33 }) else { return false }
    var r = HEVCBitstream.BitReader(Array(sps.dropFirst(2)))
    return fieldSequenceFlag(&r) ?? false
  }

  /// Whether pictures of `width` x `height` (samples `sar` wide) that the stream calls fields are fields. A picture
  /// at least twice as wide as it is high, in samples or as shown (1920x540; 720x288; 544x288 of wide samples) is; a
  /// taller one is a whole frame that an encoder was told to call a field (x265's `interlace` given woven frames
  /// instead of fields), shown as it is: woven in pairs it would come out twice the height of any frame.
  static func areFields(width: Int, height: Int, sar: AVRational) -> Bool {
    let wide = sar.num > 0 && sar.den > 0 ? Double(width) * Double(sar.num) / Double(sar.den) : Double(width)
    return height > 0 && (width >= 2 * height || wide >= Double(2 * height))
  }

  /// Whether the stream's fields go top first, from its first timing message (D.2.3: `pic_struct` leads the message
  /// when the VUI's `frame_field_info_present_flag` is set, as a stream of fields must have it; Table D.2): a top
  /// field alone or paired with the next bottom one, or a bottom field paired with the top one before (1, 11, 10);
  /// false for the other way round (2, 12, 9); nil when no message is among `units` or it names no field.
  static func topFieldFirst(in units: [ArraySlice<UInt8>]) -> Bool? {
    var found: Bool?
    HEVCBitstream.messages(in: units) { type, r in
      guard type == 1, found == nil, let picStruct = r.bits(4) else { return }
      switch picStruct {
      case 1, 10, 11: found = true
      case 2, 9, 12: found = false
      default: break
      }
    }
    return found
  }

  /// `field_seq_flag` of an SPS's RBSP (H.265 7.3.2.2 up to E.2.1): nil where the unit ends before it.
  private static func fieldSequenceFlag(_ r: inout HEVCBitstream.BitReader) -> Bool? {
    r.skip(4)  // sps_video_parameter_set_id
    guard let maxSubLayersMinus1 = r.bits(3).map(Int.init) else { return nil }
    r.skip(1)  // sps_temporal_id_nesting_flag
    guard skipProfileTierLevel(&r, maxSubLayersMinus1: maxSubLayersMinus1) else { return nil }
    guard r.ue() != nil, let chromaFormat = r.ue() else { return nil }  // sps_seq_parameter_set_id, chroma_format_idc
    if chromaFormat == 3 { r.skip(1) }  // separate_colour_plane_flag
    guard r.ue() != nil, r.ue() != nil, let conformanceWindow = r.bit() else { return nil }  // width, height
    if conformanceWindow { for _ in 0..<4 { guard r.ue() != nil else { return nil } } }
    // bit depths (luma, chroma), log2_max_pic_order_cnt_lsb_minus4
    guard r.ue() != nil, r.ue() != nil, let pocBits = r.ue().map({ Int($0) + 4 }), pocBits <= 16,
      let orderingInfoForEach = r.bit()
    else { return nil }
    for _ in (orderingInfoForEach ? 0 : maxSubLayersMinus1)...maxSubLayersMinus1 {
      for _ in 0..<3 { guard r.ue() != nil else { return nil } }  // dec_pic_buffering, num_reorder, max_latency
    }
    for _ in 0..<6 { guard r.ue() != nil else { return nil } }  // coding and transform block sizes and depths
    guard let scalingLists = r.bit() else { return nil }
    if scalingLists {
      guard let present = r.bit() else { return nil }
      if present && !skipScalingListData(&r) { return nil }
    }
    r.skip(2)  // amp_enabled_flag, sample_adaptive_offset_enabled_flag
    guard let pcm = r.bit() else { return nil }
    if pcm {
      r.skip(8)  // PCM bit depths
      guard r.ue() != nil, r.ue() != nil else { return nil }
      r.skip(1)  // pcm_loop_filter_disabled_flag
    }
    guard let setCount = r.ue().map(Int.init), setCount <= 64 else { return nil }
    var deltaCounts: [Int] = []
    for index in 0..<setCount {
      guard let count = shortTermReferenceSet(&r, index: index, deltaCounts: deltaCounts) else { return nil }
      deltaCounts.append(count)
    }
    guard let longTerm = r.bit() else { return nil }
    if longTerm {
      guard let count = r.ue(), count <= 32 else { return nil }
      for _ in 0..<count { r.skip(pocBits + 1) }  // lt_ref_pic_poc_lsb_sps, used_by_curr_pic_lt_sps_flag
    }
    r.skip(2)  // sps_temporal_mvp_enabled_flag, strong_intra_smoothing_enabled_flag
    guard let vui = r.bit() else { return nil }
    guard vui else { return false }
    guard let aspect = r.bit() else { return nil }
    if aspect, r.bits(8) == 255 { r.skip(32) }  // aspect_ratio_idc; EXTENDED_SAR: sar_width, sar_height
    guard let overscan = r.bit() else { return nil }
    if overscan { r.skip(1) }
    guard let signalType = r.bit() else { return nil }
    if signalType {
      r.skip(4)  // video_format, video_full_range_flag
      guard let colour = r.bit() else { return nil }
      if colour { r.skip(24) }
    }
    guard let chromaLocation = r.bit() else { return nil }
    if chromaLocation { guard r.ue() != nil, r.ue() != nil else { return nil } }
    r.skip(1)  // neutral_chroma_indication_flag
    return r.bit()
  }

  /// profile_tier_level(1, maxSubLayersMinus1) (7.3.3): the general profile and level, 96 bits, then each sub-layer's.
  private static func skipProfileTierLevel(_ r: inout HEVCBitstream.BitReader, maxSubLayersMinus1: Int) -> Bool {
    r.skip(96)
    var present: [(profile: Bool, level: Bool)] = []
    for _ in 0..<maxSubLayersMinus1 {
      guard let profile = r.bit(), let level = r.bit() else { return false }
      present.append((profile, level))
    }
    if maxSubLayersMinus1 > 0 { r.skip(2 * (8 - maxSubLayersMinus1)) }  // reserved_zero_2bits
    for layer in present { r.skip((layer.profile ? 88 : 0) + (layer.level ? 8 : 0)) }
    return true
  }

  /// scaling_list_data() (7.3.4).
  private static func skipScalingListData(_ r: inout HEVCBitstream.BitReader) -> Bool {
    for size in 0..<4 {
      for _ in stride(from: 0, to: 6, by: size == 3 ? 3 : 1) {
        guard let coded = r.bit() else { return false }
        if !coded {
          guard r.ue() != nil else { return false }  // scaling_list_pred_matrix_id_delta
          continue
        }
        let coefficients = min(64, 1 << (4 + (size << 1)))
        if size > 1 { guard r.se() != nil else { return false } }  // scaling_list_dc_coef_minus8
        for _ in 0..<coefficients { guard r.se() != nil else { return false } }
      }
    }
    return true
  }

  /// st_ref_pic_set(index) in an SPS (7.3.7): how many pictures it refers to (NumDeltaPocs), nil where it cannot be
  /// read. A set predicted from the one before it lists a flag or two for each of that one's pictures, and itself.
  private static func shortTermReferenceSet(_ r: inout HEVCBitstream.BitReader, index: Int, deltaCounts: [Int])
    -> Int?
  {
    if index > 0 {
      guard let predicted = r.bit() else { return nil }
      if predicted {
        r.skip(1)  // delta_rps_sign
        guard r.ue() != nil else { return nil }  // abs_delta_rps_minus1
        var count = 0
        for _ in 0...deltaCounts[index - 1] {
          guard let used = r.bit() else { return nil }
          // use_delta_flag, taken as set where it is not sent
          if used || r.bit() == true { count += 1 }
        }
        return count
      }
    }
    guard let negative = r.ue(), let positive = r.ue(), negative <= 16, positive <= 16 else { return nil }
    for _ in 0..<(negative + positive) {
      guard r.ue() != nil else { return nil }  // delta_poc_sN_minus1
      r.skip(1)  // used_by_curr_pic_sN_flag
    }
    return Int(negative + positive)
  }
}
