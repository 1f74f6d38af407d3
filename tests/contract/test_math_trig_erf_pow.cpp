// Tests of the contract's sin, cos, erf, gelu (erf form), pow and rsqrt
// (src/contract/math/trig_erf_pow.h).
//
// The (input, expected) bit patterns below were computed outside this program with MPFR (300-bit
// working precision, then one rounding to binary32 with gradual underflow). The functions are
// faithful everywhere and aim at correct rounding; these vectors are among the inputs where they
// are correctly rounded, so they must match exactly. A second tier checks faithfulness (error
// below 1 ulp) against float64 libm on sampled inputs. The sabotage arms rebuild a function from
// the same building blocks with one step broken and check that the same comparisons catch it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "contract/math.h"

namespace {

using unary_fn = float (*)(float);
using binary_fn = float (*)(float, float);

struct vec1 {
  uint32_t x;
  uint32_t expected;
};
struct vec2 {
  uint32_t x;
  uint32_t y;
  uint32_t expected;
};

const vec1 kSinVectors[] = {
    {0x3F800000u, 0x3F576AA4u}, {0x40490FDBu, 0xB3BBBD2Eu}, {0x3FC90FDBu, 0x3F800000u}, {0x7F7FFFFFu, 0xBF0599B3u},
    {0x4B000000u, 0x3EDD4FA3u}, {0x5A9C3F9Au, 0x3F56B169u}, {0x6C21BFC1u, 0xBF6A9C93u}, {0x3F000000u, 0x3EF57744u},
    {0x3F490FDBu, 0x3F3504F3u}, {0x00000001u, 0x00000001u}, {0x00800000u, 0x00800000u}, {0x39800000u, 0x39800000u},
    {0x42C80000u, 0xBF01A12Eu}, {0x4CC90FDBu, 0x3E53A179u}, {0x5F80CAB3u, 0xBF4DA0DEu}, {0x0080CAB3u, 0x0080CAB3u},
    {0x40800000u, 0xBF41BDCFu}, {0xC1300000u, 0x3F7FFF5Cu}, {0xC1600000u, 0xBF7D9872u}, {0xC1680000u, 0xBF6F5548u},
    {0xC0E20DD8u, 0xBF3438E7u}, {0x3E800000u, 0x3E7D5777u}, {0x8F0DE7FDu, 0x8F0DE7FDu}, {0xBDE54317u, 0xBDE4C896u},
    {0x3FC4DDA3u, 0x3F7FDCCAu}, {0x3F6B08FFu, 0x3F4B6142u}, {0x40FD7068u, 0x3F7F715Cu}, {0x3FE0E554u, 0x3F7B932Cu},
    {0xE6EC7876u, 0xBE1130A0u}, {0xC2D1D1FFu, 0x3F71EB72u}, {0x3F9DF017u, 0x3F719BADu}, {0x16B166E2u, 0x16B166E2u},
    {0xBD277D75u, 0xBD277182u}, {0x3FB4752Eu, 0x3F7CB0C4u}, {0xB19BDF44u, 0xB19BDF44u}, {0x4049A62Du, 0xBC1651D4u},
    {0xC04E3CC7u, 0x3DA56F5Au}, {0x56364D03u, 0xBF7EE685u}, {0x40016326u, 0x3F666A96u}, {0x3F9F6E18u, 0x3F729406u},
    {0xCF289193u, 0xBF7C6A04u}, {0xC19C149Bu, 0xBF1D0F62u}, {0xBFE2D880u, 0xBF7AD2E2u}, {0x45B5242Eu, 0xBE8F77F6u},
    {0xBBCED2A6u, 0xBBCED24Cu}, {0xBFCDA6CFu, 0xBF7FD5E0u}, {0xEFDAFA4Au, 0x3E69C6D5u}, {0xBDC2CC98u, 0xBDC2816Fu},
    {0x4001EAC2u, 0x3F657C33u}, {0xBE977AF2u, 0xBE9547ADu}, {0x41D40921u, 0x3F7AF198u}, {0x3F06BF50u, 0x3F009C67u},
    {0xD5ABE452u, 0x3E932E5Du}, {0xC2B032C7u, 0xBE0964FEu}, {0x40229FA5u, 0x3F10ACC9u}, {0xAEB622BDu, 0xAEB622BDu},
    {0xBC81D493u, 0xBC81D32Fu}, {0xC0024380u, 0xBF64DE04u}, {0xD81DB460u, 0xBF4E5DDDu}, {0x3BB5410Eu, 0x3BB540D1u},
    {0xC0536A9Du, 0x3E24F35Cu}, {0x68411412u, 0x3F6C7C5Bu}, {0x3B36C40Bu, 0x3B36C3FBu}, {0xBF77756Cu, 0xBF52AEC2u},
};
const vec1 kCosVectors[] = {
    {0x3F800000u, 0x3F0A5140u}, {0x40490FDBu, 0xBF800000u}, {0x3FC90FDBu, 0xB33BBD2Eu}, {0x7F7FFFFFu, 0x3F5A5F96u},
    {0x4B000000u, 0xBF66D965u}, {0x5A9C3F9Au, 0xBF0B7017u}, {0x6C21BFC1u, 0xBECCDFDDu}, {0x3F000000u, 0x3F60A940u},
    {0x3F490FDBu, 0x3F3504F3u}, {0x00000001u, 0x3F800000u}, {0x00800000u, 0x3F800000u}, {0x39800000u, 0x3F800000u},
    {0x42C80000u, 0x3F5CC0EEu}, {0x4CC90FDBu, 0xBF7A791Du}, {0x5F80CAB3u, 0xBF187D3Eu}, {0x0080CAB3u, 0x3F800000u},
    {0x40800000u, 0xBF275530u}, {0xC1300000u, 0x3B910572u}, {0xC1600000u, 0x3E0C04D7u}, {0xC1680000u, 0xBEB5B8A2u},
    {0xC0E20DD8u, 0x3F35D01Bu}, {0x3E800000u, 0x3F780AA5u}, {0x4108DBCAu, 0xBF24DB4Cu}, {0x3CCB6CD9u, 0x3F7FEBCCu},
    {0xC0334A2Du, 0xBF715436u}, {0xFA7F1A83u, 0x3F7576CAu}, {0x3FF449B4u, 0xBEA9A2DBu}, {0xBF8D5164u, 0x3EE6649Au},
    {0x4988ED9Eu, 0xBF48EF5Cu}, {0xBF70BD2Bu, 0x3F16E7E4u}, {0xBF0673CCu, 0x3F5D7F27u}, {0x6DE52723u, 0x3E8DB866u},
    {0x3C5700F1u, 0x3F7FFA5Bu}, {0x3FF33AE1u, 0xBEA5A346u}, {0x2D5A3E2Cu, 0x3F800000u}, {0x3BA6DEFBu, 0x3F7FFF26u},
    {0x3F2A54DDu, 0x3F4964ECu}, {0x740497BAu, 0x3F5D5DBAu}, {0x3DEBA33Fu, 0x3F7E4EB0u}, {0x3FDEA278u, 0xBE2BC40Fu},
    {0x047C0F37u, 0x3F800000u}, {0x3DC5B376u, 0x3F7ECEE1u}, {0xBF71BFD9u, 0x3F1616A2u}, {0x752D301Bu, 0xBF0AFF08u},
    {0x41C17D4Au, 0x3F15A013u}, {0x402821E5u, 0xBF5EDADEu}, {0xB4032B57u, 0x3F800000u}, {0x41C21FDEu, 0x3F25A063u},
    {0x3F196004u, 0x3F5369B0u}, {0x81EF3FC9u, 0x3F800000u}, {0x3C474F54u, 0x3F7FFB27u}, {0x403E710Du, 0xBF7C7BBDu},
    {0x398037B8u, 0x3F7FFFFFu}, {0xC2A0A035u, 0x3E4DBC9Du}, {0xC01FE6FBu, 0xBF4CDBCBu}, {0x61702882u, 0x3F7982A1u},
    {0xC02FB025u, 0xBF6C2473u}, {0xBFF27760u, 0xBEA2BE90u}, {0xF9339E56u, 0xBF0F67B8u}, {0xC21E58DCu, 0xBE9F890Fu},
    {0x3FFCE87Cu, 0xBEC9C2ACu}, {0x3C7F63CDu, 0x3F7FF80Au}, {0xBC4733FAu, 0x3F7FFB28u}, {0x3F359FAEu, 0x3F423ABCu},
};
const vec1 kErfVectors[] = {
    {0x3F800000u, 0x3F57BB3Du}, {0x40490FDBu, 0x3F7FFF6Bu}, {0x3FC90FDBu, 0x3F794306u}, {0x7F7FFFFFu, 0x3F800000u},
    {0x4B000000u, 0x3F800000u}, {0x5A9C3F9Au, 0x3F800000u}, {0x6C21BFC1u, 0x3F800000u}, {0x3F000000u, 0x3F053F7Bu},
    {0x3F490FDBu, 0x3F3BBA4Cu}, {0x00000001u, 0x00000001u}, {0x00800000u, 0x00906EBBu}, {0x39800000u, 0x39906EBAu},
    {0x42C80000u, 0x3F800000u}, {0x4CC90FDBu, 0x3F800000u}, {0x5F80CAB3u, 0x3F800000u}, {0x0080CAB3u, 0x00915373u},
    {0x40800000u, 0x3F800000u}, {0xC1300000u, 0xBF800000u}, {0xC1600000u, 0xBF800000u}, {0xC1680000u, 0xBF800000u},
    {0xC0E20DD8u, 0xBF800000u}, {0x3E800000u, 0x3E8D7AA7u}, {0x73E2C988u, 0x3F800000u}, {0xBBB63604u, 0xBBCD99DAu},
    {0x3F468940u, 0x3F3A2D83u}, {0xE43517E8u, 0xBF800000u}, {0xBB3C1BBFu, 0xBB5441CBu}, {0x3FA4F6F2u, 0x3F6E7FE2u},
    {0xB7BD73D3u, 0xB7D5C631u}, {0x3FBD85A7u, 0x3F76B755u}, {0xBF57879Bu, 0xBF442623u}, {0xC1B3904Au, 0xBF800000u},
    {0xC23F0045u, 0xBF800000u}, {0x3FA6CE38u, 0x3F6F4633u}, {0xAB2344A6u, 0xAB383A78u}, {0x3F657CF2u, 0x3F4B8C9Du},
    {0x407096CDu, 0x3F7FFFFEu}, {0x9D41B5C3u, 0x9D5A940Eu}, {0x42C11D66u, 0x3F800000u}, {0x3F127419u, 0x3F14DE0Au},
    {0xB387217Eu, 0xB3987A93u}, {0x4197323Du, 0x3F800000u}, {0xBF6F7FC6u, 0xBF506E5Cu}, {0xFD1B46DEu, 0xBF800000u},
    {0x3C95D1DDu, 0x3CA908E0u}, {0x3FA19903u, 0x3F6D01AAu}, {0x2638ADE7u, 0x26506366u}, {0x41518ACBu, 0x3F800000u},
    {0xBFF290A7u, 0xBF7E1D7Fu}, {0x80CD950Fu, 0x80E7F989u}, {0x3CED48DEu, 0x3D05D60Au}, {0xBF18B103u, 0xBF19DED2u},
    {0x86E85AB2u, 0x87031784u}, {0x405DC792u, 0x3F7FFFF0u}, {0x3F2EF04Au, 0x3F2A897Au}, {0x4E86CA96u, 0x3F800000u},
    {0xBCD31A17u, 0xBCEE2679u}, {0x3FE33C01u, 0x3F7CEA24u}, {0xF9B01CB4u, 0xBF800000u}, {0xC2E6ED91u, 0xBF800000u},
    {0x3F206ECAu, 0x3F1FE136u}, {0xBEDBB9D4u, 0xBEE984C9u}, {0x3DE32325u, 0x3DFF4000u}, {0xBFE79C6Fu, 0xBF7D4FFAu},
};
const vec1 kGeluVectors[] = {
    {0x3F800000u, 0x3F57625Fu}, {0x40490FDBu, 0x4048E49Cu}, {0x3FC90FDBu, 0x3FBD6092u}, {0x7F7FFFFFu, 0x7F7FFFFFu},
    {0x4B000000u, 0x4B000000u}, {0x5A9C3F9Au, 0x5A9C3F9Au}, {0x6C21BFC1u, 0x6C21BFC1u}, {0x3F000000u, 0x3EB103AFu},
    {0x3F490FDBu, 0x3F1D9C45u}, {0x00000001u, 0x00000001u}, {0x00800000u, 0x00400000u}, {0x39800000u, 0x39000662u},
    {0x42C80000u, 0x42C80000u}, {0x4CC90FDBu, 0x4CC90FDBu}, {0x5F80CAB3u, 0x5F80CAB3u}, {0x0080CAB3u, 0x0040655Au},
    {0x40800000u, 0x407FFDEDu}, {0xC1300000u, 0x9326840Fu}, {0xC1600000u, 0x8000004Eu}, {0xC1680000u, 0x80000000u},
    {0x3E800000u, 0x3E1944D1u}, {0x7521BD45u, 0x7521BD45u}, {0x3E443FEEu, 0x3DE21395u}, {0xBF612DF4u, 0xBE2AB7EFu},
    {0x26E0A9CCu, 0x2660A9CCu}, {0x3C284B9Cu, 0x3BA9ACB5u}, {0x3FF62CDEu, 0x3FEF7925u}, {0x931F4EA6u, 0x929F4EA6u},
    {0x3F463FE6u, 0x3F1AC3CDu}, {0x3F6A3615u, 0x3F40061Eu}, {0xB50600DDu, 0xB48600DAu}, {0xBD8C2B72u, 0xBD04856Au},
    {0xC001FE03u, 0xBD2FB74Cu}, {0x7BFB4149u, 0x7BFB4149u}, {0xBEED30F7u, 0xBE188E35u}, {0x4049E3D7u, 0x4049BA4Cu},
    {0x8742D8ADu, 0x86C2D8ADu}, {0xBE59F20Cu, 0xBDB5362Cu}, {0x3F53CC0Bu, 0x3F2895D5u}, {0x5F9B9CADu, 0x5F9B9CADu},
    {0x3EA4494Cu, 0x3E4DA2CCu}, {0x3F03939Bu, 0x3EB74018u}, {0x00BD54B5u, 0x005EAA5Bu}, {0xBC3CFF06u, 0xBBBB41B8u},
    {0xBF893EE3u, 0xBE1BB344u}, {0x884D036Eu, 0x87CD036Eu}, {0x40951188u, 0x40951178u}, {0xBFFE12A9u, 0xBD3FACDCu},
    {0x8662F6E9u, 0x85E2F6E9u}, {0x3E08852Du, 0x3D96FFE4u}, {0x3FCCA57Du, 0x3FC1679Au}, {0x4F96C5C6u, 0x4F96C5C6u},
    {0x3E1CDCE6u, 0x3DAFF5F3u}, {0x4024E870u, 0x402415E1u}, {0xFC767FC3u, 0x80000000u}, {0xBED1B493u, 0xBE0F0AF9u},
    {0x3FFB5C5Eu, 0x3FF521DEu}, {0xC872EC43u, 0x80000000u}, {0x412B4388u, 0x412B4388u}, {0x4036F947u, 0x403695BCu},
    {0x0EA1A817u, 0x0E21A817u}, {0x416C0F10u, 0x416C0F10u}, {0xBFE8E0D7u, 0xBD8047F4u},
};
const vec1 kRsqrtVectors[] = {
    {0x3F800000u, 0x3F800000u}, {0x40490FDBu, 0x3F106EBAu}, {0x3FC90FDBu, 0x3F4C4229u}, {0x7F7FFFFFu, 0x1F800000u},
    {0x4B000000u, 0x39B504F3u}, {0x5A9C3F9Au, 0x31E7B4B6u}, {0x6C21BFC1u, 0x292107E6u}, {0x3F000000u, 0x3FB504F3u},
    {0x3F490FDBu, 0x3F906EBAu}, {0x00000001u, 0x64B504F3u}, {0x00800000u, 0x5F000000u}, {0x39800000u, 0x42800000u},
    {0x42C80000u, 0x3DCCCCCDu}, {0x4CC90FDBu, 0x38CC4229u}, {0x5F80CAB3u, 0x2F7F363Du}, {0x0080CAB3u, 0x5EFF363Du},
    {0x40800000u, 0x3F000000u}, {0xC1300000u, 0x7FC00000u}, {0xC1600000u, 0x7FC00000u}, {0xC1680000u, 0x7FC00000u},
    {0xC0E20DD8u, 0x7FC00000u}, {0x3E800000u, 0x40000000u}, {0x2312C9DFu, 0x4DA909AEu}, {0x3EE47D88u, 0x3FBF9B5Au},
    {0x3F08340Du, 0x3FAF7BC2u}, {0x31717E21u, 0x4683C9E4u}, {0x3D28A361u, 0x409DB516u}, {0x407BCCE0u, 0x3F011022u},
    {0x126F2054u, 0x5604706Au}, {0x3EE1C062u, 0x3FC0C401u}, {0x407B1217u, 0x3F01401Cu}, {0x1659E4F5u, 0x540ABDDFu},
    {0x3D4D1A25u, 0x408F00BFu}, {0x3F3D70D9u, 0x3F94CBF2u}, {0x02065FEFu, 0x5E30AC63u}, {0x40DA749Eu, 0x3EC3F54Cu},
    {0x4032FB80u, 0x3F19150Du}, {0x5FA94C46u, 0x2F5E98CEu}, {0x3BE445DBu, 0x413FB2B6u}, {0x3F7AE55Fu, 0x3F814BA0u},
    {0x1AA23F6Au, 0x51E361BCu}, {0x3C992426u, 0x40EA0B75u}, {0x3F9FD773u, 0x3F651638u}, {0x37312ED0u, 0x4399DB8Fu},
    {0x4054980Au, 0x3F0C75EBu}, {0x3F899916u, 0x3F76E8FEu}, {0x438528E8u, 0x3D7AFDBCu}, {0x3C4375AEu, 0x41127CDEu},
    {0x4020DF31u, 0x3F217823u}, {0x0AEA4927u, 0x59BD38E0u}, {0x3B6ED8C6u, 0x41848440u}, {0x400B66B8u, 0x3F2D757Bu},
    {0x6F51EAE4u, 0x278D5A6Au}, {0x3F5ACD4Au, 0x3F8A7422u}, {0x3F491547u, 0x3F906CC8u}, {0x229BD5DEu, 0x4DE80344u},
    {0x41029478u, 0x3EB338DFu}, {0x401C3B7Cu, 0x3F23D968u}, {0x48E0928Bu, 0x3AC14561u}, {0x3FD5108Bu, 0x3F466BF8u},
    {0x404F7C47u, 0x3F0E2DE1u}, {0x7433113Bu, 0x25190BC2u}, {0x3D293B39u, 0x409D6E45u}, {0x3FC85D99u, 0x3F4C9CF2u},
};
const vec2 kPowVectors[] = {
    {0x395D06FEu, 0xC180375Au, 0x7F800000u}, {0x3F9EB50Eu, 0xC1150BE6u, 0x3E0A277Du}, {0xBD8693AEu, 0xC1800000u, 0x5EE5AB48u},
    {0x0A265C31u, 0x3D58D21Bu, 0x3CA3D2DDu}, {0x4E4DAEBEu, 0x3CDD67C9u, 0x3FDF368Cu}, {0x3FD7434Cu, 0x42E1429Du, 0x69B0FF9Du},
    {0xC104A2B9u, 0x41100000u, 0xCD304DD5u}, {0x349F3DE0u, 0xC0AF4980u, 0x7ADC6715u}, {0x4CD5A82Eu, 0x41714C1Cu, 0x7F800000u},
    {0x3FD9C059u, 0xC3B3A01Au, 0x00000000u}, {0xC0BCCF78u, 0x3F800000u, 0xC0BCCF78u}, {0x277B0320u, 0x4042D06Au, 0x00000007u},
    {0x4AA85A87u, 0x415F914Cu, 0x7F800000u}, {0x3FA89E1Du, 0xC2E4D1DCu, 0x28B630DBu}, {0xC1B4F0BAu, 0xC1880000u, 0x99365E1Au},
    {0x12E8117Fu, 0x3EB685BBu, 0x2F954AEBu}, {0x4AB69822u, 0x4133E453u, 0x7F800000u}, {0x3FC5C2F3u, 0xC1FDF5A3u, 0x3586F3CFu},
    {0xBC63F523u, 0x40800000u, 0x3320F3B1u}, {0x74E57BEBu, 0xBEE67C77u, 0x276F5A99u}, {0x449E0615u, 0xC1A914C2u, 0x00000000u},
    {0x3F975918u, 0x4229700Du, 0x44971A01u}, {0xBECB3B68u, 0x40C00000u, 0x3B802B4Cu}, {0x02876FEDu, 0x3F25B027u, 0x18086DBCu},
    {0x489D9618u, 0xBECF914Cu, 0x3BBF7BF7u}, {0x3FDDE7B5u, 0xC46ED95Au, 0x00000000u}, {0xBFC8A042u, 0xC0800000u, 0x3E29AA1Bu},
    {0x554616D0u, 0x3FE82FC7u, 0x670D5664u}, {0x4362AED4u, 0x405D67C9u, 0x4D063CFBu}, {0x3F94F1CCu, 0xC482DE53u, 0x00000000u},
    {0xBF686B95u, 0x41100000u, 0xBED692C8u}, {0x6383CD4Fu, 0x3D9BBA32u, 0x423247A4u}, {0x4C2DD3C6u, 0x41C67C8Au, 0x7F800000u},
    {0x3F8EA014u, 0xC1849FF8u, 0x3E2A5A75u}, {0xC19628ADu, 0x41A00000u, 0x69C2F1DCu}, {0x29F8A2C1u, 0x3E73F30Au, 0x3A56AC6Bu},
    {0x32E5DCB4u, 0xC0BC8A61u, 0x7F800000u}, {0x3FFA4BBAu, 0xC4B429CAu, 0x00000000u}, {0xBDBCF101u, 0xC1400000u, 0x54191D0Du},
    {0x0F13978Bu, 0xBE72BCD9u, 0x4AF66C99u}, {0x3FCC185Cu, 0x4104C1BBu, 0x423FFDB6u}, {0x3F9DD5F3u, 0xC419D8E7u, 0x00000000u},
    {0xC2F61D96u, 0x41300000u, 0xE5A6022Du}, {0x26363240u, 0xBED1CBF0u, 0x49CE5B77u}, {0x3C2B3D3Cu, 0x3EDD67C9u, 0x3E0E78EBu},
    {0x3FAE67B9u, 0x4376B20Au, 0x76892E36u}, {0xBC883358u, 0x41300000u, 0x9EFD6F99u}, {0x6894A14Au, 0x3FD64ED8u, 0x7F800000u},
    {0x4DD79971u, 0x4173759Fu, 0x7F800000u}, {0x3FFE7D55u, 0x437AE35Eu, 0x7F800000u}, {0xBEC98B69u, 0xC1100000u, 0xC589B3ACu},
    {0x6546E62Au, 0xBDF2DABCu, 0x3B02C7BAu}, {0x4FCDF9E4u, 0xC0114C1Cu, 0x1A5DCF98u}, {0x3FB814E4u, 0x42B7E6F3u, 0x57932024u},
    {0xC0B4795Bu, 0xC1980000u, 0xA7BFB2DBu}, {0x495AEAF3u, 0x401819D3u, 0x56FF1D47u}, {0x46A34ED7u, 0xC1848A61u, 0x00000000u},
    {0x3FFF2432u, 0xC26532A3u, 0x22FC2C69u}, {0xBE0F0785u, 0x40000000u, 0x3C9FD2CEu}, {0x605339E3u, 0xBFBD2C94u, 0x0EE9745Bu},
    {0x49D9A896u, 0xC19306EBu, 0x00000000u}, {0x3F809D87u, 0xC1628ED9u, 0x3F6F314Du}, {0xBF13CA91u, 0x40400000u, 0xBE4506FEu},
    {0x54D905B7u, 0xBFEDE774u, 0x17B7CCF7u}, {0x48DE3DC9u, 0xC1AA2983u, 0x00000000u}, {0x3F8DF4A8u, 0xC427AAB6u, 0x0D6A2E1Bu},
    {0xBD21FFA1u, 0x41900000u, 0x158AD1D3u}, {0x15F6D81Eu, 0xBFA43C56u, 0x74BD3AD8u}, {0x4EA85D4Cu, 0xC0C5306Fu, 0x00000000u},
    {0x3FD3A97Au, 0xC3CD887Fu, 0x00000000u}, {0xBC39D6DFu, 0xC1200000u, 0x5FC4D702u}, {0x0C17CFD7u, 0xBFA50B1Du, 0x7F800000u},
};

template <size_t N>
int count_vector_mismatches(unary_fn fn, const vec1 (&v)[N]) {
  int bad = 0;
  for (const vec1& t : v) bad += bl::bits_of(fn(bl::float_of(t.x))) != t.expected;
  return bad;
}

template <size_t N>
int count_vector_mismatches(binary_fn fn, const vec2 (&v)[N]) {
  int bad = 0;
  for (const vec2& t : v) bad += bl::bits_of(fn(bl::float_of(t.x), bl::float_of(t.y))) != t.expected;
  return bad;
}

// Error of y against a float64 reference r, in ulps of the binary32 grid around r.
double ulp_error(float y, double r) {
  if (std::isnan(r)) return bl::bits_of(y) == bl::kCanonicalNanBits ? 0.0 : 1e9;
  if (std::fabs(r) >= 0x1.ffffffp127) r = std::copysign(HUGE_VAL, r);  // rounds to +-inf
  if (std::isinf(r) || std::isinf(y)) return static_cast<double>(y) == r ? 0.0 : 1e9;
  double a = std::fabs(r);
  double ulp = std::ldexp(1.0, -149);
  if (a >= std::ldexp(1.0, -126)) {
    int e;
    std::frexp(static_cast<double>(static_cast<float>(a)), &e);
    ulp = std::ldexp(1.0, e - 24);
  }
  return std::fabs(static_cast<double>(y) - r) / ulp;
}

// Deterministic sample of binary32 bit patterns (splitmix64).
std::vector<float> sample_inputs(int n, uint64_t seed, bool positive_only) {
  std::vector<float> out;
  uint64_t s = seed;
  while (static_cast<int>(out.size()) < n) {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    uint32_t u = static_cast<uint32_t>(z);
    if ((z >> 40) % 2 == 0) u = (u & 0x807FFFFFu) | (static_cast<uint32_t>(110 + (z >> 48) % 30) << 23);  // moderate
    if (positive_only) u &= 0x7FFFFFFFu;
    if ((u & 0x7F800000u) == 0x7F800000u) continue;
    out.push_back(bl::float_of(u));
  }
  return out;
}

double ref_sin(double x) { return std::sin(x); }
double ref_cos(double x) { return std::cos(x); }
double ref_erf(double x) { return std::erf(x); }
double ref_gelu(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }
double ref_rsqrt(double x) { return 1.0 / std::sqrt(x); }

int count_unfaithful(unary_fn fn, double (*ref)(double), bool positive_only, uint64_t seed) {
  int bad = 0;
  for (float x : sample_inputs(1 << 15, seed, positive_only)) bad += ulp_error(fn(x), ref(x)) >= 1.0;
  return bad;
}

int count_unfaithful_pow(binary_fn fn, uint64_t seed) {
  std::vector<float> xs = sample_inputs(1 << 14, seed, true);
  std::vector<float> ts = sample_inputs(1 << 14, seed + 1, false);
  int bad = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    float x = xs[i];
    double l = std::log2(static_cast<double>(x));
    // y such that y*log2(x) spans the whole result range, including subnormal results.
    float y = static_cast<float>(std::fmod(static_cast<double>(ts[i]), 150.0) / (l == 0.0 ? 1.0 : l));
    bad += ulp_error(fn(x, y), std::pow(static_cast<double>(x), static_cast<double>(y))) >= 1.0;
  }
  return bad;
}

float f_sin(float x) { return bl::sin(x); }
float f_cos(float x) { return bl::cos(x); }
float f_erf(float x) { return bl::erf(x); }
float f_gelu(float x) { return bl::gelu(x); }
float f_rsqrt(float x) { return bl::rsqrt(x); }
float f_pow(float x, float y) { return bl::pow(x, y); }

// ---- Sabotage arms: each breaks one step of the real method. ----

// sin with a binary32 Cody-Waite reduction (one constant for pi/2): loses the low bits of r.
float sabotage_sin(float x) {
  if (!bl::is_finite(x)) return bl::canonical_nan();
  float k = bl::sub(bl::add(bl::mul(x, 0.636619772f), 12582912.0f), 12582912.0f);
  float r = bl::fma(bl::neg(k), 1.57079637f, x);
  uint32_t q = static_cast<uint32_t>(static_cast<int64_t>(std::fabs(k)) & 3);
  if (k < 0) q = (4u - q) & 3u;
  bl::ff rr{r, 0.0f};
  float v = (q & 1u) ? bl::trig_detail::cos_kernel(rr) : bl::trig_detail::sin_kernel(rr);
  return (q & 2u) ? bl::neg(v) : v;
}

// rsqrt as two roundings.
float sabotage_rsqrt(float x) { return bl::canonicalize(bl::div(1.0f, bl::sqrt(x))); }

// gelu by its formula with 1 + erf: cancels for negative x.
float sabotage_gelu(float x) {
  return bl::mul(bl::mul(0.5f, x), bl::add(1.0f, bl::erf(bl::mul(x, 0.707106781f))));
}

// pow with y*log2(x) rounded to binary32 before exp2.
float sabotage_pow(float x, float y) {
  if (!(x > 0.0f) || !bl::is_finite(x) || !bl::is_finite(y)) return bl::pow(x, y);
  bl::ff l2 = bl::pow_detail::log2_ff(x);
  float t = bl::mul(bl::add(l2.hi, l2.lo), y);
  if (!(bl::abs(t) < 400.0f)) return bl::pow(x, y);
  bl::pow_detail::scaled e = bl::pow_detail::exp2_ff(bl::ff{t, 0.0f});
  return bl::pow_detail::scale_round(e.m, e.k);
}

// ---- Tests ----

TEST(MathTrigErfPow, MpfrVectors) {
  EXPECT_EQ(count_vector_mismatches(f_sin, kSinVectors), 0);
  EXPECT_EQ(count_vector_mismatches(f_cos, kCosVectors), 0);
  EXPECT_EQ(count_vector_mismatches(f_erf, kErfVectors), 0);
  EXPECT_EQ(count_vector_mismatches(f_gelu, kGeluVectors), 0);
  EXPECT_EQ(count_vector_mismatches(f_rsqrt, kRsqrtVectors), 0);
  EXPECT_EQ(count_vector_mismatches(f_pow, kPowVectors), 0);
}

TEST(MathTrigErfPow, FaithfulOnSamples) {
  EXPECT_EQ(count_unfaithful(f_sin, ref_sin, false, 1), 0);
  EXPECT_EQ(count_unfaithful(f_cos, ref_cos, false, 2), 0);
  EXPECT_EQ(count_unfaithful(f_erf, ref_erf, false, 3), 0);
  EXPECT_EQ(count_unfaithful(f_gelu, ref_gelu, false, 4), 0);
  EXPECT_EQ(count_unfaithful(f_rsqrt, ref_rsqrt, true, 5), 0);
  EXPECT_EQ(count_unfaithful_pow(f_pow, 6), 0);
}

TEST(MathTrigErfPow, SabotageArmsAreCaught) {
  EXPECT_GT(count_vector_mismatches(sabotage_sin, kSinVectors), 0);
  EXPECT_GT(count_unfaithful(sabotage_sin, ref_sin, false, 1), 0);
  EXPECT_GT(count_vector_mismatches(sabotage_rsqrt, kRsqrtVectors), 0);
  EXPECT_GT(count_unfaithful(sabotage_rsqrt, ref_rsqrt, true, 5), 0);
  EXPECT_GT(count_vector_mismatches(sabotage_gelu, kGeluVectors), 0);
  EXPECT_GT(count_unfaithful(sabotage_gelu, ref_gelu, false, 4), 0);
  EXPECT_GT(count_vector_mismatches(sabotage_pow, kPowVectors), 0);
  EXPECT_GT(count_unfaithful_pow(sabotage_pow, 6), 0);
}

TEST(MathTrigErfPow, Symmetries) {
  for (float x : sample_inputs(1 << 14, 7, true)) {
    EXPECT_EQ(bl::bits_of(bl::sin(-x)), bl::bits_of(bl::sin(x)) ^ 0x80000000u) << x;
    EXPECT_EQ(bl::bits_of(bl::cos(-x)), bl::bits_of(bl::cos(x))) << x;
    EXPECT_EQ(bl::bits_of(bl::erf(-x)), bl::bits_of(bl::erf(x)) ^ 0x80000000u) << x;
    EXPECT_LE(bl::abs(bl::sin(x)), 1.0f);
    EXPECT_LE(bl::abs(bl::cos(x)), 1.0f);
    EXPECT_LE(bl::abs(bl::erf(x)), 1.0f);
  }
}

const uint32_t kNan = 0x7FC00000u;
const float kInf = bl::float_of(0x7F800000u);

uint32_t b(float x) { return bl::bits_of(x); }

TEST(MathTrigErfPow, SpecialValuesUnary) {
  const float nans[] = {bl::float_of(0x7FC00000u), bl::float_of(0xFFC00001u), bl::float_of(0x7F800001u)};
  for (float n : nans) {
    EXPECT_EQ(b(bl::sin(n)), kNan);
    EXPECT_EQ(b(bl::cos(n)), kNan);
    EXPECT_EQ(b(bl::erf(n)), kNan);
    EXPECT_EQ(b(bl::gelu(n)), kNan);
    EXPECT_EQ(b(bl::rsqrt(n)), kNan);
  }
  EXPECT_EQ(b(bl::sin(kInf)), kNan);
  EXPECT_EQ(b(bl::sin(-kInf)), kNan);
  EXPECT_EQ(b(bl::cos(kInf)), kNan);
  EXPECT_EQ(b(bl::cos(-kInf)), kNan);
  EXPECT_EQ(b(bl::sin(0.0f)), 0x00000000u);
  EXPECT_EQ(b(bl::sin(-0.0f)), 0x80000000u);
  EXPECT_EQ(b(bl::cos(0.0f)), b(1.0f));
  EXPECT_EQ(b(bl::cos(-0.0f)), b(1.0f));
  EXPECT_EQ(b(bl::sin(bl::float_of(1u))), 1u);  // sin(x) rounds to x for tiny x
  EXPECT_EQ(b(bl::erf(0.0f)), 0x00000000u);
  EXPECT_EQ(b(bl::erf(-0.0f)), 0x80000000u);
  EXPECT_EQ(b(bl::erf(kInf)), b(1.0f));
  EXPECT_EQ(b(bl::erf(-kInf)), b(-1.0f));
  EXPECT_EQ(b(bl::erf(bl::float_of(1u))), 1u);  // 2^-149 * 1.128 rounds to 2^-149
  EXPECT_EQ(b(bl::gelu(0.0f)), 0x00000000u);
  EXPECT_EQ(b(bl::gelu(-0.0f)), 0x80000000u);
  EXPECT_EQ(b(bl::gelu(kInf)), b(kInf));
  EXPECT_EQ(b(bl::gelu(-kInf)), 0x80000000u);
  EXPECT_EQ(b(bl::gelu(-20.0f)), 0x80000000u);  // underflows to -0
  EXPECT_EQ(b(bl::gelu(20.0f)), b(20.0f));
  EXPECT_EQ(b(bl::gelu(bl::float_of(3u))), 2u);           // 1.5 * 2^-149 + tiny rounds up
  EXPECT_EQ(b(bl::gelu(bl::float_of(0x80000003u))), 0x80000001u);  // -1.5 * 2^-149 + tiny: toward 0
  EXPECT_EQ(b(bl::rsqrt(0.0f)), b(kInf));
  EXPECT_EQ(b(bl::rsqrt(-0.0f)), b(-kInf));
  EXPECT_EQ(b(bl::rsqrt(kInf)), 0x00000000u);
  EXPECT_EQ(b(bl::rsqrt(-1.0f)), kNan);
  EXPECT_EQ(b(bl::rsqrt(-kInf)), kNan);
  EXPECT_EQ(b(bl::rsqrt(4.0f)), b(0.5f));
  EXPECT_EQ(b(bl::rsqrt(bl::float_of(1u))), b(std::ldexp(1.0f, 74) * 1.41421354f));
}

TEST(MathTrigErfPow, SpecialValuesPow) {
  const float nan = bl::float_of(0xFFC00001u);
  const float any[] = {0.0f, -0.0f, 1.0f, -1.0f, 2.5f, -3.0f, kInf, -kInf, nan, bl::float_of(1u)};
  for (float v : any) {
    EXPECT_EQ(b(bl::pow(v, 0.0f)), b(1.0f));
    EXPECT_EQ(b(bl::pow(v, -0.0f)), b(1.0f));
    EXPECT_EQ(b(bl::pow(1.0f, v)), b(1.0f));
  }
  EXPECT_EQ(b(bl::pow(nan, 2.0f)), kNan);
  EXPECT_EQ(b(bl::pow(2.0f, nan)), kNan);
  EXPECT_EQ(b(bl::pow(-1.0f, kInf)), b(1.0f));
  EXPECT_EQ(b(bl::pow(-1.0f, -kInf)), b(1.0f));
  // +-0 bases.
  EXPECT_EQ(b(bl::pow(-0.0f, -3.0f)), b(-kInf));
  EXPECT_EQ(b(bl::pow(0.0f, -3.0f)), b(kInf));
  EXPECT_EQ(b(bl::pow(-0.0f, -2.0f)), b(kInf));
  EXPECT_EQ(b(bl::pow(-0.0f, -0.5f)), b(kInf));
  EXPECT_EQ(b(bl::pow(-0.0f, -kInf)), b(kInf));
  EXPECT_EQ(b(bl::pow(-0.0f, 3.0f)), 0x80000000u);
  EXPECT_EQ(b(bl::pow(0.0f, 3.0f)), 0x00000000u);
  EXPECT_EQ(b(bl::pow(-0.0f, 2.0f)), 0x00000000u);
  EXPECT_EQ(b(bl::pow(-0.0f, 0.5f)), 0x00000000u);
  EXPECT_EQ(b(bl::pow(-0.0f, kInf)), 0x00000000u);
  // Infinite exponents.
  EXPECT_EQ(b(bl::pow(0.5f, -kInf)), b(kInf));
  EXPECT_EQ(b(bl::pow(-0.5f, -kInf)), b(kInf));
  EXPECT_EQ(b(bl::pow(2.0f, -kInf)), 0u);
  EXPECT_EQ(b(bl::pow(0.5f, kInf)), 0u);
  EXPECT_EQ(b(bl::pow(-2.0f, kInf)), b(kInf));
  // Infinite bases.
  EXPECT_EQ(b(bl::pow(-kInf, -3.0f)), 0x80000000u);
  EXPECT_EQ(b(bl::pow(-kInf, -2.0f)), 0u);
  EXPECT_EQ(b(bl::pow(-kInf, 3.0f)), b(-kInf));
  EXPECT_EQ(b(bl::pow(-kInf, 2.5f)), b(kInf));
  EXPECT_EQ(b(bl::pow(kInf, -0.5f)), 0u);
  EXPECT_EQ(b(bl::pow(kInf, 0.5f)), b(kInf));
  // Negative finite bases.
  EXPECT_EQ(b(bl::pow(-2.0f, 0.5f)), kNan);
  EXPECT_EQ(b(bl::pow(-2.0f, 3.0f)), b(-8.0f));
  EXPECT_EQ(b(bl::pow(-2.0f, -3.0f)), b(-0.125f));
  EXPECT_EQ(b(bl::pow(-2.0f, 2.0f)), b(4.0f));
  EXPECT_EQ(b(bl::pow(-3.0f, 16777216.0f)), b(kInf));  // 2^24: even
  EXPECT_EQ(b(bl::pow(-1.0f, 16777215.0f)), b(-1.0f)); // 2^24-1: odd
  // Overflow and underflow keep the sign.
  EXPECT_EQ(b(bl::pow(-10.0f, 39.0f)), b(-kInf));
  EXPECT_EQ(b(bl::pow(-10.0f, -47.0f)), 0x80000000u);
  EXPECT_EQ(b(bl::pow(10.0f, 40.0f)), b(kInf));
  EXPECT_EQ(b(bl::pow(2.0f, -149.0f)), 1u);
  EXPECT_EQ(b(bl::pow(2.0f, -150.0f)), 0u);  // halfway to 2^-149: ties to even
  EXPECT_EQ(b(bl::pow(2.0f, 127.0f)), b(std::ldexp(1.0f, 127)));
  EXPECT_EQ(b(bl::pow(2.0f, 128.0f)), b(kInf));
  // Exact cases.
  EXPECT_EQ(b(bl::pow(4.0f, 0.5f)), b(2.0f));
  EXPECT_EQ(b(bl::pow(3.0f, 5.0f)), b(243.0f));
  EXPECT_EQ(b(bl::pow(0.25f, -1.5f)), b(8.0f));
}

}  // namespace
